//! Generated from redis-server 7.0.15 by running each expression through
//! `WRAPPER` (EVAL, after SCRIPT FLUSH). Do not edit by hand.

/// The Lua chunk each case runs in: `EXPR` is replaced by the expression.
pub(crate) const WRAPPER: &str = r#"local function body() return EXPR end
local function show(v, depth)
  local t = type(v)
  if t == 'string' then return string.format('%q', v)
  elseif t == 'table' then
    if depth > 5 then return '{...}' end
    local parts = {}
    for k, x in pairs(v) do parts[#parts + 1] = '[' .. show(k, depth + 1) .. ']=' .. show(x, depth + 1) end
    return '{' .. table.concat(parts, ',') .. '}'
  elseif t == 'userdata' then
    if v == cjson.null then return 'null' end
    return 'userdata'
  elseif t == 'number' then
    if v == 0 and 1 / v < 0 then return '-0' end
    return tostring(v)
  elseif t == 'function' then return 'function'
  else return tostring(v) end
end
local function pack(...) return {n = select('#', ...), ...} end
local r = pack(pcall(body))
local out = {}
for i = 1, r.n do out[#out + 1] = show(r[i], 0) end
local text = table.concat(out, ' | ')
return (string.gsub(text, '[^%w%p ]', function(c) return '\\' .. string.byte(c) end))
"#;

pub(crate) const BIT: &[(&str, &str)] = &[
    (r##"bit.tobit(1)"##, r##"true | 1"##),
    (r##"bit.tobit(0xffffffff)"##, r##"true | -1"##),
    (r##"bit.tobit(2^32 + 5)"##, r##"true | 5"##),
    (r##"bit.tobit(-1)"##, r##"true | -1"##),
    (r##"bit.tobit(1.5)"##, r##"true | 2"##),
    (r##"bit.tobit(2.5)"##, r##"true | 2"##),
    (r##"bit.tobit(-2.5)"##, r##"true | -2"##),
    (r##"bit.tobit(2^52)"##, r##"true | 0"##),
    (r##"bit.tobit(2^53 + 2)"##, r##"true | 1"##),
    (r##"bit.tobit(1e300)"##, r##"true | -2013235812"##),
    (r##"bit.tobit(1/0)"##, r##"true | 0"##),
    (r##"bit.tobit(-1/0)"##, r##"true | 0"##),
    (r##"bit.tobit(0/0)"##, r##"true | 0"##),
    (r##"bit.tobit('12')"##, r##"true | 12"##),
    (r##"bit.tobit('0x10')"##, r##"true | 16"##),
    (r##"bit.tobit(' 7 ')"##, r##"true | 7"##),
    (
        r##"bit.tobit('x')"##,
        r##"false | "user_script:1: bad argument #1 to 'tobit' (number expected, got string)""##,
    ),
    (
        r##"bit.tobit(nil)"##,
        r##"false | "user_script:1: bad argument #1 to 'tobit' (number expected, got nil)""##,
    ),
    (
        r##"bit.tobit()"##,
        r##"false | "user_script:1: bad argument #1 to 'tobit' (number expected, got no value)""##,
    ),
    (
        r##"bit.tobit({})"##,
        r##"false | "user_script:1: bad argument #1 to 'tobit' (number expected, got table)""##,
    ),
    (
        r##"bit.tobit(true)"##,
        r##"false | "user_script:1: bad argument #1 to 'tobit' (number expected, got boolean)""##,
    ),
    (r##"bit.bnot(0)"##, r##"true | -1"##),
    (r##"bit.bnot(-1)"##, r##"true | 0"##),
    (r##"bit.bnot(0x12345678)"##, r##"true | -305419897"##),
    (r##"bit.band(0xff, 0x0f)"##, r##"true | 15"##),
    (r##"bit.band(1, 3, 5, 7)"##, r##"true | 1"##),
    (r##"bit.band(1)"##, r##"true | 1"##),
    (
        r##"bit.band()"##,
        r##"false | "user_script:1: bad argument #1 to 'band' (number expected, got no value)""##,
    ),
    (
        r##"bit.band(1, 'a', 'b')"##,
        r##"false | "user_script:1: bad argument #3 to 'band' (number expected, got string)""##,
    ),
    (
        r##"bit.band(1, 2, nil)"##,
        r##"false | "user_script:1: bad argument #3 to 'band' (number expected, got nil)""##,
    ),
    (r##"bit.bor(1, 2, 4, 8)"##, r##"true | 15"##),
    (r##"bit.bor(0x80000000, 1)"##, r##"true | -2147483647"##),
    (r##"bit.bxor(0xff, 0x0f, 1)"##, r##"true | 241"##),
    (r##"bit.lshift(1, 31)"##, r##"true | -2147483648"##),
    (r##"bit.lshift(1, 32)"##, r##"true | 1"##),
    (r##"bit.lshift(1, 33)"##, r##"true | 2"##),
    (r##"bit.lshift(1, -1)"##, r##"true | -2147483648"##),
    (r##"bit.lshift(0xff, 4)"##, r##"true | 4080"##),
    (r##"bit.rshift(-1, 28)"##, r##"true | 15"##),
    (r##"bit.rshift(0x80000000, 31)"##, r##"true | 1"##),
    (r##"bit.rshift(256, 4)"##, r##"true | 16"##),
    (r##"bit.arshift(-256, 4)"##, r##"true | -16"##),
    (r##"bit.arshift(0x80000000, 31)"##, r##"true | -1"##),
    (r##"bit.arshift(256, 4)"##, r##"true | 16"##),
    (r##"bit.rol(0x12345678, 8)"##, r##"true | 878082066"##),
    (r##"bit.rol(0x12345678, 0)"##, r##"true | 305419896"##),
    (r##"bit.rol(0x12345678, 36)"##, r##"true | 591751041"##),
    (r##"bit.ror(0x12345678, 8)"##, r##"true | 2014458966"##),
    (r##"bit.ror(1, 1)"##, r##"true | -2147483648"##),
    (r##"bit.bswap(0x12345678)"##, r##"true | 2018915346"##),
    (r##"bit.bswap(-1)"##, r##"true | -1"##),
    (r##"bit.bswap(1)"##, r##"true | 16777216"##),
    (r##"bit.tohex(255)"##, r##"true | "000000ff""##),
    (r##"bit.tohex(-1)"##, r##"true | "ffffffff""##),
    (r##"bit.tohex(255, 2)"##, r##"true | "ff""##),
    (r##"bit.tohex(255, -2)"##, r##"true | "FF""##),
    (r##"bit.tohex(0x12345678, -8)"##, r##"true | "12345678""##),
    (r##"bit.tohex(0x12345678, 4)"##, r##"true | "5678""##),
    (r##"bit.tohex(0x12345678, 12)"##, r##"true | "12345678""##),
    (r##"bit.tohex(1, 0)"##, r##"true | """##),
    (
        r##"bit.tohex(1, nil)"##,
        r##"false | "user_script:1: bad argument #2 to 'tohex' (number expected, got nil)""##,
    ),
    (r##"bit.tohex('16', '3')"##, r##"true | "010""##),
    (
        r##"bit.lshift('x', 1)"##,
        r##"false | "user_script:1: bad argument #1 to 'lshift' (number expected, got string)""##,
    ),
    (
        r##"bit.rshift(1, {})"##,
        r##"false | "user_script:1: bad argument #2 to 'rshift' (number expected, got table)""##,
    ),
    (
        r##"(function() local f = bit.bnot return f('q') end)()"##,
        r##"false | "user_script:1: bad argument #1 to 'f' (number expected, got string)""##,
    ),
    (
        r##"pcall(bit.band, 'q')"##,
        r##"true | false | "bad argument #1 to '?' (number expected, got string)""##,
    ),
    (
        r##"select(2, pcall(bit.bor, 1, 'q'))"##,
        r##"true | "bad argument #2 to '?' (number expected, got string)""##,
    ),
    (
        r##"bit.band(unpack((function() local t = {} for i = 1, 40 do t[i] = 0xff + i * 256 end return t end)()))"##,
        r##"true | 255"##,
    ),
    (
        r##"bit.bor(unpack((function() local t = {} for i = 1, 40 do t[i] = i end t[33] = 'z' return t end)()))"##,
        r##"false | "user_script:1: bad argument #33 to 'bor' (number expected, got string)""##,
    ),
    (
        r##"bit.bxor(unpack((function() local t = {} for i = 1, 3000 do t[i] = i end return t end)()))"##,
        r##"true | 3000"##,
    ),
];

pub(crate) const STRUCT: &[(&str, &str)] = &[
    (r##"struct.pack('b', 1)"##, r##"true | "\1""##),
    (r##"struct.pack('bB', -1, 255)"##, r##"true | "\255\255""##),
    (r##"struct.pack('h', -2)"##, r##"true | "\254\255""##),
    (r##"struct.pack('>h', 258)"##, r##"true | "\1\2""##),
    (r##"struct.pack('<H', 258)"##, r##"true | "\2\1""##),
    (
        r##"struct.pack('>l', 1)"##,
        r##"true | "\000\000\000\000\000\000\000\1""##,
    ),
    (
        r##"struct.pack('L', 1)"##,
        r##"true | "\1\000\000\000\000\000\000\000""##,
    ),
    (
        r##"struct.pack('T', 5)"##,
        r##"true | "\5\000\000\000\000\000\000\000""##,
    ),
    (r##"struct.pack('i', 7)"##, r##"true | "\7\000\000\000""##),
    (r##"struct.pack('>i', 7)"##, r##"true | "\000\000\000\7""##),
    (r##"struct.pack('i2', 513)"##, r##"true | "\1\2""##),
    (r##"struct.pack('I3', 70000)"##, r##"true | "p\17\1""##),
    (r##"struct.pack('>i3', -2)"##, r##"true | "\255\255\254""##),
    (
        r##"struct.pack('<i16', -2)"##,
        r##"true | "\254\255\255\255\255\255\255\255\000\000\000\000\000\000\000\000""##,
    ),
    (
        r##"struct.pack('>I16', 1)"##,
        r##"true | "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\1""##,
    ),
    (r##"struct.pack('i0', 5)"##, r##"true | """##),
    (r##"struct.pack('f', 1.5)"##, r##"true | "\000\000\192?""##),
    (r##"struct.pack('>f', 1.5)"##, r##"true | "?\192\000\000""##),
    (r##"struct.pack('f', 1/3)"##, r##"true | "\171\170\170>""##),
    (r##"struct.pack('d', 1/3)"##, r##"true | "UUUUUU\213?""##),
    (
        r##"struct.pack('>d', -2.5)"##,
        r##"true | "\192\4\000\000\000\000\000\000""##,
    ),
    (
        r##"struct.pack('d', -0.0)"##,
        r##"true | "\000\000\000\000\000\000\000\128""##,
    ),
    (
        r##"struct.pack('d', 1e-300)"##,
        r##"true | "Y\243\248\194\31n\165\1""##,
    ),
    (
        r##"struct.pack('>d', -1e-17)"##,
        r##"true | "\188g\14\245FF\212\151""##,
    ),
    (
        r##"struct.pack('f', 1e-40)"##,
        r##"true | "\194\22\1\000""##,
    ),
    (r##"struct.pack('b', 1e-20)"##, r##"true | "\000""##),
    (r##"bit.tobit(1e-20)"##, r##"true | 0"##),
    (
        r##"struct.pack('d', 1/0)"##,
        r##"true | "\000\000\000\000\000\000\240\127""##,
    ),
    (r##"struct.pack('c', 'abc')"##, r##"true | "a""##),
    (r##"struct.pack('c3', 'abcdef')"##, r##"true | "abc""##),
    (r##"struct.pack('c0', 'hello')"##, r##"true | "hello""##),
    (
        r##"struct.pack('c5', 'abc')"##,
        r##"false | "user_script:1: bad argument #3 to 'pack' (string too short)""##,
    ),
    (r##"struct.pack('s', 'hi')"##, r##"true | "hi\000""##),
    (r##"struct.pack('s', 'a\0b')"##, r##"true | "a\000b\000""##),
    (r##"struct.pack('x')"##, r##"true | "\000""##),
    (r##"struct.pack('bxb', 1, 2)"##, r##"true | "\1\000\2""##),
    (
        r##"struct.pack('!4bi', 1, 2)"##,
        r##"true | "\1\000\000\000\2\000\000\000""##,
    ),
    (
        r##"struct.pack('!bd', 1, 2)"##,
        r##"true | "\1\000\000\000\000\000\000\000\000\000\000\000\000\000\000@""##,
    ),
    (
        r##"struct.pack('!2bhbi', 1, 2, 3, 4)"##,
        r##"true | "\1\000\2\000\3\000\4\000\000\000""##,
    ),
    (
        r##"struct.pack('!4bxd', 1, 2.5)"##,
        r##"true | "\1\000\000\000\000\000\000\000\000\000\4@""##,
    ),
    (r##"struct.pack(' b b ', 1, 2)"##, r##"true | "\1\2""##),
    (r##"struct.pack('<>b', 1)"##, r##"true | "\1""##),
    (
        r##"struct.pack('!3b', 1)"##,
        r##"false | "user_script:1: alignment 3 is not a power of 2""##,
    ),
    (
        r##"struct.pack('q', 1)"##,
        r##"false | "user_script:1: bad argument #1 to 'pack' (invalid format option 'q')""##,
    ),
    (
        r##"struct.pack('5', 1)"##,
        r##"false | "user_script:1: bad argument #1 to 'pack' (invalid format option '5')""##,
    ),
    (
        r##"struct.pack('i33', 1)"##,
        r##"false | "user_script:1: integral size 33 is larger than limit of 32""##,
    ),
    (
        r##"struct.pack('i99999999999', 1)"##,
        r##"false | "user_script:1: integral size overflow""##,
    ),
    (
        r##"struct.pack('b')"##,
        r##"false | "user_script:1: bad argument #2 to 'pack' (number expected, got nil)""##,
    ),
    (
        r##"struct.pack('b', 'x')"##,
        r##"false | "user_script:1: bad argument #2 to 'pack' (number expected, got string)""##,
    ),
    (r##"struct.pack('b', '12')"##, r##"true | "\12""##),
    (r##"struct.pack('s', 12)"##, r##"true | "12\000""##),
    (
        r##"struct.pack('s', {})"##,
        r##"false | "user_script:1: bad argument #2 to 'pack' (string expected, got table)""##,
    ),
    (r##"struct.pack('bc0', 1, 'abc')"##, r##"true | "\1abc""##),
    (r##"struct.pack('Bx', 300)"##, r##"true | ",\000""##),
    (r##"struct.pack('b', -1.7)"##, r##"true | "\255""##),
    (
        r##"struct.pack('L', 2^64)"##,
        r##"true | "\000\000\000\000\000\000\000\000""##,
    ),
    (
        r##"struct.pack('L', 2^63)"##,
        r##"true | "\000\000\000\000\000\000\000\128""##,
    ),
    (
        r##"struct.pack('l', -2^63 - 4096)"##,
        r##"true | "\000\000\000\000\000\000\000\128""##,
    ),
    (
        r##"struct.pack('l', 2^53 + 1)"##,
        r##"true | "\000\000\000\000\000\000 \000""##,
    ),
    (r##"struct.pack('b\0b', 1, 2)"##, r##"true | "\1""##),
    (
        r##"struct.pack()"##,
        r##"false | "user_script:1: bad argument #1 to 'pack' (string expected, got no value)""##,
    ),
    (
        r##"struct.pack({})"##,
        r##"false | "user_script:1: bad argument #1 to 'pack' (string expected, got table)""##,
    ),
    (r##"struct.unpack('b', '\255')"##, r##"true | -1 | 2"##),
    (r##"struct.unpack('B', '\255')"##, r##"true | 255 | 2"##),
    (r##"struct.unpack('>h', '\1\2')"##, r##"true | 258 | 3"##),
    (r##"struct.unpack('<h', '\1\2')"##, r##"true | 513 | 3"##),
    (
        r##"struct.unpack('H', '\255\255')"##,
        r##"true | 65535 | 3"##,
    ),
    (r##"struct.unpack('i', '\1\0\0\0')"##, r##"true | 1 | 5"##),
    (
        r##"struct.unpack('>i3', '\255\255\254')"##,
        r##"true | -2 | 4"##,
    ),
    (
        r##"struct.unpack('I3', '\255\255\255')"##,
        r##"true | 16777215 | 4"##,
    ),
    (
        r##"struct.unpack('<i16', struct.pack('<i16', -2))"##,
        r##"true | -2 | 17"##,
    ),
    (
        r##"struct.unpack('>I9', '\1\0\0\0\0\0\0\0\0')"##,
        r##"true | 0 | 10"##,
    ),
    (
        r##"struct.unpack('l', '\255\255\255\255\255\255\255\255')"##,
        r##"true | -1 | 9"##,
    ),
    (
        r##"struct.unpack('L', '\255\255\255\255\255\255\255\255')"##,
        r##"true | 1.844674407371e+19 | 9"##,
    ),
    (r##"struct.unpack('i0', 'ab')"##, r##"true | 0 | 1"##),
    (
        r##"struct.unpack('f', struct.pack('f', 1.5))"##,
        r##"true | 1.5 | 5"##,
    ),
    (
        r##"struct.unpack('>d', struct.pack('>d', -2.5))"##,
        r##"true | -2.5 | 9"##,
    ),
    (
        r##"struct.unpack('d', struct.pack('d', -0.0))"##,
        r##"true | -0 | 9"##,
    ),
    (
        r##"struct.unpack('c2c1', 'abc')"##,
        r##"true | "ab" | "c" | 4"##,
    ),
    (
        r##"struct.unpack('bc0', '\3abcd')"##,
        r##"true | "abc" | 5"##,
    ),
    (
        r##"struct.unpack('c0', 'abc')"##,
        r##"false | "user_script:1: format 'c0' needs a previous size""##,
    ),
    (
        r##"struct.unpack('c1c0', '3abcd')"##,
        r##"true | "abc" | 5"##,
    ),
    (
        r##"struct.unpack('c1c0', 'xabcd')"##,
        r##"false | "user_script:1: format 'c0' needs a previous size""##,
    ),
    (
        r##"struct.unpack('s', 'abc')"##,
        r##"false | "user_script:1: unfinished string in data""##,
    ),
    (
        r##"struct.unpack('ss', 'ab\0cd\0')"##,
        r##"true | "ab" | "cd" | 7"##,
    ),
    (
        r##"struct.unpack('sb', 'ab\0\5')"##,
        r##"true | "ab" | 5 | 5"##,
    ),
    (
        r##"struct.unpack('b', '')"##,
        r##"false | "user_script:1: bad argument #2 to 'unpack' (data string too short)""##,
    ),
    (
        r##"struct.unpack('i', 'abc')"##,
        r##"false | "user_script:1: bad argument #2 to 'unpack' (data string too short)""##,
    ),
    (r##"struct.unpack('b', 'abc', 2)"##, r##"true | 98 | 3"##),
    (r##"struct.unpack('b', 'abc', 3)"##, r##"true | 99 | 4"##),
    (
        r##"struct.unpack('b', 'abc', 4)"##,
        r##"false | "user_script:1: bad argument #2 to 'unpack' (data string too short)""##,
    ),
    (r##"struct.unpack('', 'abc', 9)"##, r##"true | 9"##),
    (
        r##"struct.unpack('b', 'a', 0)"##,
        r##"false | "user_script:1: bad argument #3 to 'unpack' (offset must be 1 or greater)""##,
    ),
    (
        r##"struct.unpack('b', 'a', -1)"##,
        r##"false | "user_script:1: bad argument #2 to 'unpack' (data string too short)""##,
    ),
    (r##"struct.unpack('', 'a', -5)"##, r##"true | -5"##),
    (
        r##"struct.unpack('!4bi', '\1\0\0\0\2\0\0\0')"##,
        r##"true | 1 | 2 | 9"##,
    ),
    (
        r##"struct.unpack('!4bi', '\1\0\0\0\2\0\0')"##,
        r##"false | "user_script:1: bad argument #2 to 'unpack' (data string too short)""##,
    ),
    (r##"struct.unpack('x', 'a')"##, r##"true | 2"##),
    (r##"struct.unpack('xb', 'ab')"##, r##"true | 98 | 3"##),
    (
        r##"struct.unpack('q', 'a')"##,
        r##"false | "user_script:1: bad argument #1 to 'unpack' (invalid format option 'q')""##,
    ),
    (
        r##"struct.unpack('!3', 'a')"##,
        r##"false | "user_script:1: alignment 3 is not a power of 2""##,
    ),
    (
        r##"struct.unpack('b')"##,
        r##"false | "user_script:1: bad argument #2 to 'unpack' (string expected, got no value)""##,
    ),
    (
        r##"struct.unpack('b', {})"##,
        r##"false | "user_script:1: bad argument #2 to 'unpack' (string expected, got table)""##,
    ),
    (
        r##"struct.unpack('b', 'a', 'x')"##,
        r##"false | "user_script:1: bad argument #3 to 'unpack' (number expected, got string)""##,
    ),
    (
        r##"{struct.unpack(string.rep('b', 40), string.rep('\1', 40))}"##,
        r##"true | {[1]=1,[2]=1,[3]=1,[4]=1,[5]=1,[6]=1,[7]=1,[8]=1,[9]=1,[10]=1,[11]=1,[12]=1,[13]=1,[14]=1,[15]=1,[16]=1,[17]=1,[18]=1,[19]=1,[20]=1,[21]=1,[22]=1,[23]=1,[24]=1,[25]=1,[26]=1,[27]=1,[28]=1,[29]=1,[30]=1,[31]=1,[32]=1,[33]=1,[34]=1,[35]=1,[36]=1,[37]=1,[38]=1,[39]=1,[40]=1,[41]=41}"##,
    ),
    (
        r##"select('#', struct.unpack(string.rep('b', 7996), string.rep('\1', 7996)))"##,
        r##"true | 7997"##,
    ),
    (
        r##"select('#', struct.unpack(string.rep('b', 7997), string.rep('\1', 7997)))"##,
        r##"true | 7998"##,
    ),
    (
        r##"select('#', struct.unpack(string.rep('b', 7998), string.rep('\1', 7998)))"##,
        r##"false | "user_script:1: stack overflow (too many results)""##,
    ),
    (r##"struct.size('b')"##, r##"true | 1"##),
    (r##"struct.size('bhilfdT')"##, r##"true | 35"##),
    (r##"struct.size('!bhilfdT')"##, r##"true | 40"##),
    (r##"struct.size('!4bi')"##, r##"true | 8"##),
    (r##"struct.size('bi')"##, r##"true | 5"##),
    (r##"struct.size('!bd')"##, r##"true | 16"##),
    (r##"struct.size('c10')"##, r##"true | 10"##),
    (r##"struct.size('i7x')"##, r##"true | 8"##),
    (r##"struct.size('q')"##, r##"true | 0"##),
    (r##"struct.size('5')"##, r##"true | 0"##),
    (
        r##"struct.size('?')"##,
        r##"false | "user_script:1: bad argument #1 to 'size' (invalid format option '?')""##,
    ),
    (
        r##"struct.size('!3')"##,
        r##"false | "user_script:1: alignment 3 is not a power of 2""##,
    ),
    (
        r##"struct.size('s')"##,
        r##"false | "user_script:1: bad argument #1 to 'size' (option 's' has no fixed size)""##,
    ),
    (
        r##"struct.size('c0')"##,
        r##"false | "user_script:1: bad argument #1 to 'size' (option 'c0' has no fixed size)""##,
    ),
    (
        r##"struct.size('i33')"##,
        r##"false | "user_script:1: integral size 33 is larger than limit of 32""##,
    ),
    (
        r##"struct.size('i99999999999')"##,
        r##"false | "user_script:1: integral size overflow""##,
    ),
    (
        r##"struct.size()"##,
        r##"false | "user_script:1: bad argument #1 to 'size' (string expected, got no value)""##,
    ),
    (r##"struct.size(12)"##, r##"true | 0"##),
    (
        r##"struct.pack(string.rep('b', 40), unpack((function() local t = {} for i = 1, 40 do t[i] = i end return t end)()))"##,
        r##"true | "\1\2\3\4\5\6\7\8\9\\10\11\12\r\14\15\16\17\18\19\20\21\22\23\24\25\26\27\28\29\30\31 !\"#$%&'(""##,
    ),
    (
        r##"struct.pack(string.rep('b', 41), unpack((function() local t = {} for i = 1, 40 do t[i] = i end return t end)()))"##,
        r##"false | "user_script:1: bad argument #42 to 'pack' (number expected, got nil)""##,
    ),
    (
        r##"struct.pack(string.rep('b', 42), unpack((function() local t = {} for i = 1, 40 do t[i] = i end return t end)()))"##,
        r##"false | "user_script:1: bad argument #42 to 'pack' (number expected, got nil)""##,
    ),
    (
        r##"struct.pack(string.rep('d', 40), unpack((function() local t = {} for i = 1, 40 do t[i] = -0.0 end return t end)()))"##,
        r##"true | "\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128\000\000\000\000\000\000\000\128""##,
    ),
    (
        r##"struct.pack(string.rep('s', 40), unpack((function() local t = {} for i = 1, 40 do t[i] = 'v' .. i end return t end)()))"##,
        r##"true | "v1\000v2\000v3\000v4\000v5\000v6\000v7\000v8\000v9\000v10\000v11\000v12\000v13\000v14\000v15\000v16\000v17\000v18\000v19\000v20\000v21\000v22\000v23\000v24\000v25\000v26\000v27\000v28\000v29\000v30\000v31\000v32\000v33\000v34\000v35\000v36\000v37\000v38\000v39\000v40\000""##,
    ),
    (
        r##"#struct.pack(string.rep('c0', 6000), unpack((function() local t = {} for i = 1, 6000 do t[i] = 'v' .. i end return t end)()))"##,
        r##"true | 28893"##,
    ),
    (
        r##"struct.pack('!2bibhd', 1, 2, 3, 4, 5.5)"##,
        r##"true | "\1\000\2\000\000\000\3\000\4\000\000\000\000\000\000\000\22@""##,
    ),
    (
        r##"struct.pack('!1bi', 1, 2)"##,
        r##"true | "\1\2\000\000\000""##,
    ),
    (
        r##"struct.pack('!16bd', 1, 2)"##,
        r##"true | "\1\000\000\000\000\000\000\000\000\000\000\000\000\000\000@""##,
    ),
    (
        r##"struct.pack('<!4bh>i', 1, 2, 3)"##,
        r##"true | "\1\000\2\000\000\000\000\3""##,
    ),
    (
        r##"struct.unpack('!2bibhd', struct.pack('!2bibhd', 1, 2, 3, 4, 5.5))"##,
        r##"true | 1 | 2 | 3 | 4 | 5.5 | 19"##,
    ),
    (
        r##"struct.unpack('!4bxxi', struct.pack('!4bxxi', 7, 9))"##,
        r##"true | 7 | 9 | 9"##,
    ),
    (r##"struct.size('!2bibhd')"##, r##"true | 18"##),
    (r##"struct.size('!16bd')"##, r##"true | 16"##),
    (r##"struct.size('<i3>I5')"##, r##"true | 8"##),
    (
        r##"struct.unpack('>I3<i3', '\1\2\3\1\2\3')"##,
        r##"true | 66051 | 197121 | 7"##,
    ),
    (r##"struct.pack('I3', -1)"##, r##"true | "\255\255\255""##),
    (r##"struct.unpack('b', 'abc', 2.9)"##, r##"true | 98 | 3"##),
    (r##"struct.unpack('b', 'abc', '2')"##, r##"true | 98 | 3"##),
    (r##"struct.pack('c', 12)"##, r##"true | "1""##),
    (r##"struct.pack('s', '')"##, r##"true | "\000""##),
    (r##"struct.unpack('s', '\0')"##, r##"true | "" | 2"##),
    (
        r##"struct.unpack('c3', 'ab')"##,
        r##"false | "user_script:1: bad argument #2 to 'unpack' (data string too short)""##,
    ),
    (
        r##"struct.unpack('c0', '')"##,
        r##"false | "user_script:1: format 'c0' needs a previous size""##,
    ),
    (
        r##"struct.unpack('bc0b', '\2ab\3')"##,
        r##"true | "ab" | 3 | 5"##,
    ),
    (
        r##"struct.unpack('bc0', '\255ab')"##,
        r##"false | "user_script:1: bad argument #2 to 'unpack' (data string too short)""##,
    ),
    (
        r##"struct.pack('d', 0/0) == struct.pack('d', 0/0)"##,
        r##"true | true"##,
    ),
    (
        r##"struct.unpack('>f', '\127\192\0\0')"##,
        r##"true | nan | 5"##,
    ),
];

pub(crate) const CMSGPACK: &[(&str, &str)] = &[
    (r##"cmsgpack.pack(1)"##, r##"true | "\1""##),
    (
        r##"cmsgpack.pack(0, 127, 128, 255, 256, 65535, 65536, 2^32 - 1, 2^32)"##,
        r##"true | "\000\127\204\128\204\255\205\1\000\205\255\255\206\000\1\000\000\206\255\255\255\255\207\000\000\000\1\000\000\000\000""##,
    ),
    (
        r##"cmsgpack.pack(-1, -32, -33, -128, -129, -32768, -32769, -2^31, -2^31 - 1)"##,
        r##"true | "\255\224\208\223\208\128\209\255\127\209\128\000\210\255\255\127\255\210\128\000\000\000\211\255\255\255\255\127\255\255\255""##,
    ),
    (
        r##"cmsgpack.pack(2^53, -2^53, 2^63, -2^63, 2^64)"##,
        r##"true | "\207\000 \000\000\000\000\000\000\211\255\224\000\000\000\000\000\000\202_\000\000\000\211\128\000\000\000\000\000\000\000\202_\128\000\000""##,
    ),
    (
        r##"cmsgpack.pack(1.5, -1.5, 0.1, 1/3, 1e300)"##,
        r##"true | "\202?\192\000\000\202\191\192\000\000\203?\185\153\153\153\153\153\154\203?\213UUUUUU\203~7\228<\136\000u\156""##,
    ),
    (
        r##"cmsgpack.pack(1/0, -1/0, 0/0)"##,
        r##"true | "\202\127\128\000\000\202\255\128\000\000\203\255\248\000\000\000\000\000\000""##,
    ),
    (r##"cmsgpack.pack(-0.0)"##, r##"true | "\000""##),
    (r##"cmsgpack.pack('')"##, r##"true | "\160""##),
    (r##"cmsgpack.pack('abc')"##, r##"true | "\163abc""##),
    (
        r##"cmsgpack.pack(string.rep('a', 31))"##,
        r##"true | "\191aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa""##,
    ),
    (
        r##"cmsgpack.pack(string.rep('a', 32))"##,
        r##"true | "\217 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa""##,
    ),
    (
        r##"string.sub(cmsgpack.pack(string.rep('a', 255)), 1, 4)"##,
        r##"true | "\217\255aa""##,
    ),
    (
        r##"string.sub(cmsgpack.pack(string.rep('a', 256)), 1, 4)"##,
        r##"true | "\218\1\000a""##,
    ),
    (
        r##"string.sub(cmsgpack.pack(string.rep('a', 65535)), 1, 4)"##,
        r##"true | "\218\255\255a""##,
    ),
    (
        r##"string.sub(cmsgpack.pack(string.rep('a', 65536)), 1, 6)"##,
        r##"true | "\219\000\1\000\000a""##,
    ),
    (
        r##"cmsgpack.pack(true, false, nil)"##,
        r##"true | "\195\194\192""##,
    ),
    (r##"cmsgpack.pack(nil)"##, r##"true | "\192""##),
    (r##"cmsgpack.pack({})"##, r##"true | "\144""##),
    (r##"cmsgpack.pack({1, 2, 3})"##, r##"true | "\147\1\2\3""##),
    (
        r##"cmsgpack.pack({1, 2, nil, 4})"##,
        r##"true | "\131\1\1\2\2\4\4""##,
    ),
    (
        r##"cmsgpack.pack({[1] = 1, [3] = 3})"##,
        r##"true | "\130\1\1\3\3""##,
    ),
    (r##"cmsgpack.pack({[2] = 2})"##, r##"true | "\129\2\2""##),
    (
        r##"cmsgpack.pack({[1.5] = 1})"##,
        r##"true | "\129\202?\192\000\000\1""##,
    ),
    (r##"cmsgpack.pack({[0] = 1})"##, r##"true | "\129\000\1""##),
    (r##"cmsgpack.pack({[-1] = 1})"##, r##"true | "\129\255\1""##),
    (
        r##"cmsgpack.pack({[2^31] = 1})"##,
        r##"true | "\129\206\128\000\000\000\1""##,
    ),
    (r##"cmsgpack.pack({a = 1})"##, r##"true | "\129\161a\1""##),
    (
        r##"cmsgpack.pack({a = {b = {c = 1}}})"##,
        r##"true | "\129\161a\129\161b\129\161c\1""##,
    ),
    (
        r##"cmsgpack.pack({1, 'a', {true}})"##,
        r##"true | "\147\1\161a\145\195""##,
    ),
    (
        r##"string.sub(cmsgpack.pack(string.split and {} or (function() local t = {} for i = 1, 16 do t[i] = i end return t end)()), 1, 4)"##,
        r##"true | "\220\000\16\1""##,
    ),
    (
        r##"string.sub(cmsgpack.pack((function() local t = {} for i = 1, 70000 do t[i] = 0 end return t end)()), 1, 6)"##,
        r##"true | "\221\000\1\17p\000""##,
    ),
    (
        r##"string.sub(cmsgpack.pack((function() local t = {} for i = 1, 20 do t['k' .. i] = i end return t end)()), 1, 4)"##,
        r##"true | "\222\000\20\163""##,
    ),
    (
        r##"#cmsgpack.pack((function() local t = {} for i = 1, 20 do t['k' .. i] = i end return t end)())"##,
        r##"true | 94"##,
    ),
    (
        r##"cmsgpack.pack((function() local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end return t end)())"##,
        r##"true | "\145\145\145\145\145\145\145\145\145\145\145\145\145\145\145\145\192""##,
    ),
    (
        r##"cmsgpack.pack((function() local t = {} t[1] = t return t end)())"##,
        r##"true | "\145\145\145\145\145\145\145\145\145\145\145\145\145\145\145\145\192""##,
    ),
    (r##"cmsgpack.pack(function() end)"##, r##"true | "\192""##),
    (r##"cmsgpack.pack(cjson.null)"##, r##"true | "\192""##),
    (
        r##"cmsgpack.pack(coroutine.create(function() end))"##,
        r##"true | "\192""##,
    ),
    (
        r##"cmsgpack.pack()"##,
        r##"false | "user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.)""##,
    ),
    (
        r##"cmsgpack.unpack(cmsgpack.pack(1, 2, 3))"##,
        r##"true | 1 | 2 | 3"##,
    ),
    (
        r##"cmsgpack.unpack(cmsgpack.pack({1, 2, {a = 'x'}}))"##,
        r##"true | {[1]=1,[2]=2,[3]={["a"]="x"}}"##,
    ),
    (
        r##"cmsgpack.unpack(cmsgpack.pack(0, 127, 128, 255, 256, 65535, 65536, 2^32 - 1, 2^32))"##,
        r##"true | 0 | 127 | 128 | 255 | 256 | 65535 | 65536 | 4294967295 | 4294967296"##,
    ),
    (
        r##"cmsgpack.unpack(cmsgpack.pack(-1, -32, -33, -128, -129, -32768, -32769, -2^31, -2^31 - 1))"##,
        r##"true | -1 | -32 | -33 | -128 | -129 | -32768 | -32769 | -2147483648 | -2147483649"##,
    ),
    (
        r##"cmsgpack.unpack(cmsgpack.pack(2^53, -2^53, 2^63, -2^63, 2^64))"##,
        r##"true | 9.007199254741e+15 | -9.007199254741e+15 | 9.2233720368548e+18 | -9.2233720368548e+18 | 1.844674407371e+19"##,
    ),
    (
        r##"cmsgpack.unpack(cmsgpack.pack(1.5, -1.5, 0.1, 1/3, 1e300, 1/0, -1/0))"##,
        r##"true | 1.5 | -1.5 | 0.1 | 0.33333333333333 | 1e+300 | inf | -inf"##,
    ),
    (
        r##"cmsgpack.unpack(cmsgpack.pack(true, false, nil, 'x'))"##,
        r##"true | true | false | nil | "x""##,
    ),
    (r##"cmsgpack.unpack('')"##, r##"true"##),
    (r##"cmsgpack.unpack('\192')"##, r##"true | nil"##),
    (
        r##"cmsgpack.unpack('\193')"##,
        r##"false | "user_script:1: Bad data format in input.""##,
    ),
    (
        r##"cmsgpack.unpack('\196\1a')"##,
        r##"false | "user_script:1: Bad data format in input.""##,
    ),
    (r##"cmsgpack.unpack('\217\3abc')"##, r##"true | "abc""##),
    (r##"cmsgpack.unpack('\218\0\3abc')"##, r##"true | "abc""##),
    (
        r##"cmsgpack.unpack('\219\0\0\0\3abc')"##,
        r##"true | "abc""##,
    ),
    (
        r##"cmsgpack.unpack('\219\0\0\0\9abc')"##,
        r##"false | "user_script:1: Missing bytes in input.""##,
    ),
    (
        r##"cmsgpack.unpack('\205\1')"##,
        r##"false | "user_script:1: Missing bytes in input.""##,
    ),
    (
        r##"cmsgpack.unpack('\207\255\255\255\255\255\255\255\255')"##,
        r##"true | -1"##,
    ),
    (
        r##"cmsgpack.unpack('\211\255\255\255\255\255\255\255\255')"##,
        r##"true | -1"##,
    ),
    (r##"cmsgpack.unpack('\202\63\192\0\0')"##, r##"true | 1.5"##),
    (
        r##"cmsgpack.unpack('\203\63\248\0\0\0\0\0\0')"##,
        r##"true | 1.5"##,
    ),
    (r##"cmsgpack.unpack('\209\255\254')"##, r##"true | -2"##),
    (
        r##"cmsgpack.unpack('\210\255\255\255\254')"##,
        r##"true | -2"##,
    ),
    (
        r##"cmsgpack.unpack('\220\0\2\1\2')"##,
        r##"true | {[1]=1,[2]=2}"##,
    ),
    (
        r##"cmsgpack.unpack('\221\0\0\0\2\1\2')"##,
        r##"true | {[1]=1,[2]=2}"##,
    ),
    (
        r##"cmsgpack.unpack('\221\255\255\255\255\1\2')"##,
        r##"false | "user_script:1: Missing bytes in input.""##,
    ),
    (
        r##"cmsgpack.unpack('\222\0\1\161a\1')"##,
        r##"true | {["a"]=1}"##,
    ),
    (
        r##"cmsgpack.unpack('\223\0\0\0\1\161a\1')"##,
        r##"true | {["a"]=1}"##,
    ),
    (
        r##"cmsgpack.unpack('\129\192\1')"##,
        r##"false | "table index is nil""##,
    ),
    (r##"cmsgpack.unpack('\129\1\192')"##, r##"true | {}"##),
    (
        r##"cmsgpack.unpack('\129\203\127\248\0\0\0\0\0\1\1')"##,
        r##"false | "table index is NaN""##,
    ),
    (
        r##"cmsgpack.unpack('\146\1')"##,
        r##"false | "user_script:1: Missing bytes in input.""##,
    ),
    (r##"cmsgpack.unpack('\255\224')"##, r##"true | -1 | -32"##),
    (r##"cmsgpack.unpack('\1', 'extra')"##, r##"true | 1"##),
    (r##"cmsgpack.unpack(12)"##, r##"true | 49 | 50"##),
    (
        r##"cmsgpack.unpack()"##,
        r##"false | "user_script:1: bad argument #1 to 'unpack' (string expected, got no value)""##,
    ),
    (
        r##"cmsgpack.unpack({})"##,
        r##"false | "user_script:1: bad argument #1 to 'unpack' (string expected, got table)""##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))"##,
        r##"true | 1 | 1"##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 1)"##,
        r##"true | 2 | 2"##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)"##,
        r##"true | -1 | 3"##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 3)"##,
        r##"true | -1"##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 4)"##,
        r##"false | "user_script:1: Start offset 4 greater than input length 3.""##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), -1)"##,
        r##"false | "user_script:1: Invalid request to unpack with offset of -1 and limit of 3.""##,
    ),
    (r##"cmsgpack.unpack_one('')"##, r##"true | -1"##),
    (
        r##"cmsgpack.unpack_one('\146\1')"##,
        r##"false | "user_script:1: Missing bytes in input.""##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 'x')"##,
        r##"false | "user_script:1: bad argument #2 to 'unpack_one' (number expected, got string)""##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)"##,
        r##"true | 2 | 1 | 2"##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2, 1)"##,
        r##"true | -1 | 2 | 3"##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 5)"##,
        r##"true | -1 | 1 | 2 | 3"##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0)"##,
        r##"true | 1 | 2 | 3"##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0, 1)"##,
        r##"true | 1"##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), -1)"##,
        r##"false | "user_script:1: Invalid request to unpack with offset of 0 and limit of 3.""##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3))"##,
        r##"false | "user_script:1: bad argument #2 to 'unpack_limit' (number expected, got no value)""##,
    ),
    (
        r##"cmsgpack.unpack_limit(nil, 'x')"##,
        r##"false | "user_script:1: bad argument #2 to 'unpack_limit' (number expected, got string)""##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 1, 9)"##,
        r##"false | "user_script:1: Start offset 9 greater than input length 3.""##,
    ),
    (
        r##"select('#', cmsgpack.unpack(string.rep('\1', 7999)))"##,
        r##"true | 7999"##,
    ),
    (
        r##"select('#', cmsgpack.unpack(string.rep('\1', 8000)))"##,
        r##"false | "user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""##,
    ),
    (
        r##"select('#', cmsgpack.unpack(string.rep('\1', 7996) .. '\145\145\1'))"##,
        r##"false | "user_script:1: stack overflow (in function mp_decode_to_lua_array)""##,
    ),
    (
        r##"select('#', cmsgpack.unpack(string.rep('\1', 7997) .. '\145\145\1'))"##,
        r##"false | "user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""##,
    ),
    (
        r##"select('#', cmsgpack.unpack(string.rep('\1', 7998) .. '\145\145\1'))"##,
        r##"false | "user_script:1: stack overflow (in function mp_decode_to_lua_array)""##,
    ),
    (
        r##"select('#', cmsgpack.unpack(string.rep('\1', 7996) .. '\129\129\1\2\3'))"##,
        r##"false | "user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""##,
    ),
    (
        r##"select('#', cmsgpack.unpack(string.rep('\1', 40)))"##,
        r##"true | 40"##,
    ),
    (
        r##"select('#', cmsgpack.unpack_limit(string.rep('\1', 40), 35))"##,
        r##"true | 36"##,
    ),
    (
        r##"#cmsgpack.unpack(string.rep('\145', 3000) .. '\1')"##,
        r##"true | 1"##,
    ),
    (
        r##"cmsgpack.unpack(string.rep('\145', 3999) .. '\1')"##,
        r##"true | {[1]={[1]={[1]={[1]={[1]={[1]={...}}}}}}}"##,
    ),
    (
        r##"cmsgpack.unpack(string.rep('\145', 4000) .. '\1')"##,
        r##"false | "user_script:1: stack overflow (in function mp_decode_to_lua_array)""##,
    ),
    (r##"cmsgpack._NAME"##, r##"true | "cmsgpack""##),
    (r##"cmsgpack._VERSION"##, r##"true | "lua-cmsgpack 0.4.0""##),
    (
        r##"cmsgpack.pack(unpack((function() local t = {} for i = 1, 40 do t[i] = 'v' .. i end return t end)()))"##,
        r##"true | "\162v1\162v2\162v3\162v4\162v5\162v6\162v7\162v8\162v9\163v10\163v11\163v12\163v13\163v14\163v15\163v16\163v17\163v18\163v19\163v20\163v21\163v22\163v23\163v24\163v25\163v26\163v27\163v28\163v29\163v30\163v31\163v32\163v33\163v34\163v35\163v36\163v37\163v38\163v39\163v40""##,
    ),
    (
        r##"cmsgpack.pack(-0.0, 1, unpack((function() local t = {} for i = 1, 40 do t[i] = -0.0 end return t end)()))"##,
        r##"true | "\000\1\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000""##,
    ),
    (
        r##"#cmsgpack.pack(unpack((function() local t = {} for i = 1, 4000 do t[i] = 'v' .. i end return t end)()))"##,
        r##"true | 22893"##,
    ),
    (
        r##"cmsgpack.pack(unpack((function() local t = {} for i = 1, 4001 do t[i] = 'v' .. i end return t end)()))"##,
        r##"false | "user_script:1: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)""##,
    ),
    (
        r##"cmsgpack.pack(unpack((function() local t = {} for i = 1, 7000 do t[i] = 'v' .. i end return t end)()))"##,
        r##"false | "user_script:1: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)""##,
    ),
    (
        r##"#cmsgpack.pack((function() local t = {} for i = 1, 9000 do t['k' .. i] = 'v' .. i end return t end)())"##,
        r##"true | 105789"##,
    ),
    (
        r##"#cmsgpack.pack((function() local t = {} for i = 1, 9000 do t[i] = 'v' .. i end return t end)())"##,
        r##"true | 52896"##,
    ),
    (
        r##"select('#', cmsgpack.unpack(cmsgpack.pack(unpack((function() local t = {} for i = 1, 3000 do t[i] = 'v' .. i end return t end)()))))"##,
        r##"true | 3000"##,
    ),
    (
        r##"(function() local r = {cmsgpack.unpack(cmsgpack.pack(unpack((function() local t = {} for i = 1, 3000 do t[i] = 'v' .. i end return t end)())))} return r[2999] end)()"##,
        r##"true | "v2999""##,
    ),
    (
        r##"#cmsgpack.unpack(cmsgpack.pack((function() local t = {} for i = 1, 9000 do t[i] = 'v' .. i end return t end)()))"##,
        r##"true | 9000"##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack({1, 2}, {a = 1}, 'x'), 1, 3)"##,
        r##"true | 7 | {["a"]=1}"##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack({1, 2}, {a = 1}, 'x'), 2, 3)"##,
        r##"true | -1 | {["a"]=1} | "x""##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack({1, 2}, 'x'), 3)"##,
        r##"true | -1 | "x""##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack({1, 2}, 'x'), 1)"##,
        r##"true | 2 | 1"##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack(1), 1)"##,
        r##"true | -1"##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack(1), 2)"##,
        r##"false | "user_script:1: Start offset 2 greater than input length 1.""##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack(1, 2), 1, 2.7)"##,
        r##"true | -1"##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack(1, 2), 2^32 + 1)"##,
        r##"true | -1 | 1 | 2"##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2^31)"##,
        r##"true | -1 | 1 | 2 | 3"##,
    ),
    (
        r##"cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), -2^31 - 1)"##,
        r##"false | "user_script:1: Invalid request to unpack with offset of 0 and limit of 3.""##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2^32 + 1)"##,
        r##"false | "user_script:1: Start offset 1 greater than input length 3.""##,
    ),
    (
        r##"cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), -2^32 + 1)"##,
        r##"false | "user_script:1: Invalid request to unpack with offset of 1 and limit of 3.""##,
    ),
    (
        r##"cmsgpack.pack(1e-20, -1e-20, 5e-324, -0.0)"##,
        r##"true | "\203;\199\156\161\12\146B#\203\187\199\156\161\12\146B#\203\000\000\000\000\000\000\000\1\000""##,
    ),
    (
        r##"cmsgpack.pack({1e-20, -0.0, 1e-300})"##,
        r##"true | "\147\203;\199\156\161\12\146B#\000\203\1\165n\31\194\248\243Y""##,
    ),
    (
        r##"cmsgpack.pack({[true] = 1, [false] = 0})"##,
        r##"true | "\130\194\000\195\1""##,
    ),
    (
        r##"cmsgpack.pack({['1'] = 1})"##,
        r##"true | "\129\1611\1""##,
    ),
    (
        r##"cmsgpack.pack({1, 2, [4] = 4})"##,
        r##"true | "\131\1\1\2\2\4\4""##,
    ),
    (
        r##"cmsgpack.pack({n = 1/0})"##,
        r##"true | "\129\161n\202\127\128\000\000""##,
    ),
    (
        r##"cmsgpack.pack(2^31, 2^31 - 0.5, -2^31 - 0.5)"##,
        r##"true | "\206\128\000\000\000\203A\223\255\255\255\224\000\000\203\193\224\000\000\000\16\000\000""##,
    ),
    (
        r##"cmsgpack.pack(3.4028234663852886e38, 3.4028235677973366e38, 1e-45, 1.401298464324817e-45)"##,
        r##"true | "\202\127\127\255\255\203G\239\255\255\240\000\000\000\2036\150\214\1\1737j\185\202\000\000\000\1""##,
    ),
    (
        r##"cmsgpack.unpack('\202\127\192\0\0')"##,
        r##"true | nan"##,
    ),
    (
        r##"cmsgpack.unpack('\203\127\248\0\0\0\0\0\0')"##,
        r##"true | nan"##,
    ),
    (
        r##"cmsgpack.unpack('\203\255\240\0\0\0\0\0\0')"##,
        r##"true | -inf"##,
    ),
    (
        r##"cmsgpack.unpack('\147\1\192\3')"##,
        r##"true | {[1]=1,[3]=3}"##,
    ),
    (
        r##"cmsgpack.unpack('\130\1\2\1\3')"##,
        r##"true | {[1]=3}"##,
    ),
    (
        r##"cmsgpack.unpack('\218\0')"##,
        r##"false | "user_script:1: Missing bytes in input.""##,
    ),
    (
        r##"cmsgpack.unpack('\221\0\0')"##,
        r##"false | "user_script:1: Missing bytes in input.""##,
    ),
    (
        r##"cmsgpack.unpack('\223\0\0\0\1\1')"##,
        r##"false | "user_script:1: Missing bytes in input.""##,
    ),
];

pub(crate) const CJSON: &[(&str, &str)] = &[
    (r##"cjson.encode(1)"##, r##"true | "1""##),
    (r##"cjson.encode({1, 2, 3})"##, r##"true | "[1,2,3]""##),
    (r##"cjson.encode({})"##, r##"true | "{}""##),
    (r##"cjson.encode({a = 1})"##, r##"true | "{\"a\":1}""##),
    (
        r##"cjson.encode({a = {b = {c = {1, 2}}}})"##,
        r##"true | "{\"a\":{\"b\":{\"c\":[1,2]}}}""##,
    ),
    (r##"cjson.encode('abc')"##, r##"true | "\"abc\"""##),
    (
        r##"cjson.encode(string.char(127, 0, 1, 8, 9, 10, 11, 12, 13, 31, 32, 34, 47, 92, 200, 255))"##,
        r##"true | "\"\\u007f\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f \\\"\\/\\\\\200\255\"""##,
    ),
    (r##"cjson.encode(true)"##, r##"true | "true""##),
    (r##"cjson.encode(false)"##, r##"true | "false""##),
    (r##"cjson.encode(nil)"##, r##"true | "null""##),
    (r##"cjson.encode(cjson.null)"##, r##"true | "null""##),
    (
        r##"cjson.encode({cjson.null, nil, 3})"##,
        r##"true | "[null,null,3]""##,
    ),
    (
        r##"cjson.encode({0.1, 1/3, 1e300, 100, -0.0, 2^53, 1e15, 1e14, 123456789012345678, -1.5e-7, 3.14159265358979, 1e-300, 5e-324, 0.0001, 0.00001})"##,
        r##"true | "[0.1,0.33333333333333,1e+300,100,-0,9.007199254741e+15,1e+15,1e+14,1.2345678901235e+17,-1.5e-07,3.1415926535898,1e-300,4.9406564584125e-324,0.0001,1e-05]""##,
    ),
    (r##"cjson.encode(-0.0)"##, r##"true | "-0""##),
    (r##"cjson.encode(1e-20)"##, r##"true | "1e-20""##),
    (r##"cjson.encode(-1e-300)"##, r##"true | "-1e-300""##),
    (
        r##"cjson.encode({x = 1e-20, y = -0.0})"##,
        r##"true | "{\"y\":-0,\"x\":1e-20}""##,
    ),
    (
        r##"cjson.decode('[1e-20, -0.0, -1e-300]')"##,
        r##"true | {[1]=1e-20,[2]=-0,[3]=-1e-300}"##,
    ),
    (
        r##"cjson.encode(1/0)"##,
        r##"false | "user_script:1: Cannot serialise number: must not be NaN or Inf""##,
    ),
    (
        r##"cjson.encode(-1/0)"##,
        r##"false | "user_script:1: Cannot serialise number: must not be NaN or Inf""##,
    ),
    (
        r##"cjson.encode(0/0)"##,
        r##"false | "user_script:1: Cannot serialise number: must not be NaN or Inf""##,
    ),
    (
        r##"cjson.encode({[1/0] = 1})"##,
        r##"false | "user_script:1: Cannot serialise number: must not be NaN or Inf""##,
    ),
    (
        r##"(function() cjson.encode_invalid_numbers(true) return cjson.encode({1/0, -1/0, 0/0, -(0/0)}) end)()"##,
        r##"true | "[inf,-inf,nan,nan]""##,
    ),
    (
        r##"(function() cjson.encode_invalid_numbers('on') return cjson.encode({1/0}) end)()"##,
        r##"true | "[inf]""##,
    ),
    (
        r##"(function() cjson.encode_invalid_numbers('null') return cjson.encode({1, 1/0, 0/0}) end)()"##,
        r##"true | "[1,null,null]""##,
    ),
    (
        r##"(function() cjson.encode_invalid_numbers('null') return cjson.encode({[1/0] = 1}) end)()"##,
        r##"true | "{\"null\":1}""##,
    ),
    (
        r##"(function() cjson.encode_invalid_numbers('null') return cjson.encode_invalid_numbers() end)()"##,
        r##"true | "null""##,
    ),
    (
        r##"cjson.encode_invalid_numbers('maybe')"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_invalid_numbers' (invalid option 'maybe')""##,
    ),
    (
        r##"cjson.encode_invalid_numbers({})"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_invalid_numbers' (string expected, got table)""##,
    ),
    (
        r##"cjson.encode_invalid_numbers(1)"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_invalid_numbers' (invalid option '1')""##,
    ),
    (
        r##"cjson.encode_invalid_numbers(false)"##,
        r##"true | false"##,
    ),
    (
        r##"cjson.encode_invalid_numbers(nil)"##,
        r##"true | false"##,
    ),
    (
        r##"cjson.encode_invalid_numbers(true, 1)"##,
        r##"false | "user_script:1: bad argument #2 to 'encode_invalid_numbers' (found too many arguments)""##,
    ),
    (
        r##"cjson.encode({function() end})"##,
        r##"false | "user_script:1: Cannot serialise function: type not supported""##,
    ),
    (
        r##"cjson.encode(function() end)"##,
        r##"false | "user_script:1: Cannot serialise function: type not supported""##,
    ),
    (
        r##"cjson.encode({[true] = 1})"##,
        r##"false | "user_script:1: Cannot serialise boolean: table key must be a number or string""##,
    ),
    (
        r##"cjson.encode({[{}] = 1})"##,
        r##"false | "user_script:1: Cannot serialise table: table key must be a number or string""##,
    ),
    (
        r##"cjson.encode(coroutine.create(function() end))"##,
        r##"false | "user_script:1: Cannot serialise thread: type not supported""##,
    ),
    (
        r##"cjson.encode({[1] = 1, [3] = 3})"##,
        r##"true | "[1,null,3]""##,
    ),
    (
        r##"cjson.encode({[1] = 1, [10] = 3})"##,
        r##"true | "[1,null,null,null,null,null,null,null,null,3]""##,
    ),
    (
        r##"cjson.encode({[1] = 1, [11] = 3})"##,
        r##"false | "user_script:1: Cannot serialise table: excessively sparse array""##,
    ),
    (
        r##"cjson.encode({[1] = 1, [30] = 3})"##,
        r##"false | "user_script:1: Cannot serialise table: excessively sparse array""##,
    ),
    (
        r##"cjson.encode({[1] = 1, [1.5] = 3})"##,
        r##"true | "{\"1\":1,\"1.5\":3}""##,
    ),
    (
        r##"cjson.encode({[1e10] = 1})"##,
        r##"true | "{\"10000000000\":1}""##,
    ),
    (r##"cjson.encode({[-1] = 1})"##, r##"true | "{\"-1\":1}""##),
    (r##"cjson.encode({[0] = 1})"##, r##"true | "{\"0\":1}""##),
    (
        r##"cjson.encode({[20] = 1})"##,
        r##"false | "user_script:1: Cannot serialise table: excessively sparse array""##,
    ),
    (
        r##"cjson.encode({[2] = 1, [4] = 1, [6] = 1, [8] = 1, [10] = 1, [12] = 1})"##,
        r##"true | "[null,1,null,1,null,1,null,1,null,1,null,1]""##,
    ),
    (
        r##"cjson.encode({[2] = 1, [4] = 1, [6] = 1, [8] = 1, [10] = 1, [12] = 1, [13] = 1})"##,
        r##"true | "[null,1,null,1,null,1,null,1,null,1,null,1,1]""##,
    ),
    (
        r##"(function() cjson.encode_sparse_array(true) return cjson.encode({[1] = 1, [30] = 3}) end)()"##,
        r##"true | "{\"1\":1,\"30\":3}""##,
    ),
    (
        r##"(function() cjson.encode_sparse_array(false, 0) return cjson.encode({[1] = 1, [30] = 3}) end)()"##,
        r##"true | "[1,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,3]""##,
    ),
    (
        r##"(function() cjson.encode_sparse_array(false, 1, 0) return cjson.encode({[2] = 1}) end)()"##,
        r##"false | "user_script:1: Cannot serialise table: excessively sparse array""##,
    ),
    (
        r##"(function() cjson.encode_sparse_array(false, 3, 2) return cjson.encode({[1] = 1, [3] = 3}) end)()"##,
        r##"true | "[1,null,3]""##,
    ),
    (
        r##"(function() cjson.encode_sparse_array(false, 3, 2) return cjson.encode({[1] = 1, [7] = 3}) end)()"##,
        r##"false | "user_script:1: Cannot serialise table: excessively sparse array""##,
    ),
    (
        r##"cjson.encode_sparse_array()"##,
        r##"true | false | 2 | 10"##,
    ),
    (
        r##"cjson.encode_sparse_array(true)"##,
        r##"true | true | 2 | 10"##,
    ),
    (
        r##"cjson.encode_sparse_array('on', 5, 6)"##,
        r##"true | true | 5 | 6"##,
    ),
    (
        r##"cjson.encode_sparse_array(nil, 5)"##,
        r##"true | false | 5 | 10"##,
    ),
    (
        r##"cjson.encode_sparse_array(true, -1)"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)""##,
    ),
    (
        r##"cjson.encode_sparse_array(false, 1, -1)"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)""##,
    ),
    (
        r##"cjson.encode_sparse_array('x')"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_sparse_array' (invalid option 'x')""##,
    ),
    (
        r##"cjson.encode_sparse_array({})"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_sparse_array' (string expected, got table)""##,
    ),
    (
        r##"cjson.encode_sparse_array(1, 2, 3, 4)"##,
        r##"false | "user_script:1: bad argument #4 to 'encode_sparse_array' (found too many arguments)""##,
    ),
    (
        r##"cjson.encode_sparse_array(true, 'x')"##,
        r##"false | "user_script:1: bad argument #2 to 'encode_sparse_array' (number expected, got string)""##,
    ),
    (
        r##"(function() cjson.encode_sparse_array(true, -1) return cjson.encode_sparse_array() end)()"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)""##,
    ),
    (r##"cjson.encode_max_depth()"##, r##"true | 1000"##),
    (r##"cjson.encode_max_depth(5)"##, r##"true | 5"##),
    (
        r##"cjson.encode_max_depth(0)"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)""##,
    ),
    (r##"cjson.encode_max_depth('3')"##, r##"true | 3"##),
    (r##"cjson.encode_max_depth(2.7)"##, r##"true | 2"##),
    (
        r##"cjson.encode_max_depth(1, 2)"##,
        r##"false | "user_script:1: bad argument #2 to 'encode_max_depth' (found too many arguments)""##,
    ),
    (
        r##"(function() cjson.encode_max_depth(2) return cjson.encode({{{1}}}) end)()"##,
        r##"false | "user_script:1: Cannot serialise, excessive nesting (3)""##,
    ),
    (
        r##"(function() cjson.encode_max_depth(2) return cjson.encode({{1}}) end)()"##,
        r##"true | "[[1]]""##,
    ),
    (
        r##"(function() cjson.encode_max_depth(2) return cjson.encode({a = {b = {}}}) end)()"##,
        r##"false | "user_script:1: Cannot serialise, excessive nesting (3)""##,
    ),
    (
        r##"(function() cjson.encode_max_depth(2) return cjson.encode({{}, {}, {}}) end)()"##,
        r##"true | "[{},{},{}]""##,
    ),
    (
        r##"cjson.encode((function() local t = {} t[1] = t return t end)())"##,
        r##"false | "user_script:1: Cannot serialise, excessive nesting (1001)""##,
    ),
    (
        r##"cjson.encode((function() local t = {} local c = t for i = 1, 999 do c[1] = {} c = c[1] end return t end)()) == string.rep('[', 999) .. '[]' .. string.rep(']', 999)"##,
        r##"true | false"##,
    ),
    (
        r##"(function() cjson.encode_max_depth(100000) local t = {} local c = t for i = 1, 9000 do c[1] = {} c = c[1] end return cjson.encode(t) end)()"##,
        r##"false | "user_script:1: Cannot serialise, excessive nesting (7998)""##,
    ),
    (
        r##"(function() cjson.encode_max_depth(100000) local t = {} local c = t for i = 1, 9000 do c.a = {} c = c.a end return cjson.encode(t) end)()"##,
        r##"false | "user_script:1: Cannot serialise, excessive nesting (4000)""##,
    ),
    (
        r##"(function() cjson.encode_max_depth(100000) local t = {} local c = t for i = 1, 7996 do c[1] = {} c = c[1] end return #cjson.encode(t) end)()"##,
        r##"true | 15994"##,
    ),
    (
        r##"(function() cjson.encode_max_depth(100000) local t = {} local c = t for i = 1, 7997 do c[1] = {} c = c[1] end return #cjson.encode(t) end)()"##,
        r##"false | "user_script:1: Cannot serialise, excessive nesting (7998)""##,
    ),
    (
        r##"(function() cjson.encode_max_depth(100000) local t = {} local c = t for i = 1, 3997 do c.a = {} c = c.a end return #cjson.encode(t) end)()"##,
        r##"true | 23984"##,
    ),
    (
        r##"(function() cjson.encode_max_depth(100000) local t = {} local c = t for i = 1, 3998 do c.a = {} c = c.a end return #cjson.encode(t) end)()"##,
        r##"true | 23990"##,
    ),
    (r##"cjson.encode_number_precision()"##, r##"true | 14"##),
    (r##"cjson.encode_number_precision(3)"##, r##"true | 3"##),
    (
        r##"cjson.encode_number_precision(15)"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)""##,
    ),
    (
        r##"cjson.encode_number_precision(0)"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)""##,
    ),
    (
        r##"cjson.encode_number_precision('a')"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_number_precision' (number expected, got string)""##,
    ),
    (
        r##"(function() cjson.encode_number_precision(3) return cjson.encode({1/3, 1234567, 0.000123456, 100}) end)()"##,
        r##"true | "[0.333,1.23e+06,0.000123,100]""##,
    ),
    (
        r##"(function() cjson.encode_number_precision(1) return cjson.encode({1/3, 15, 0.5}) end)()"##,
        r##"true | "[0.3,2e+01,0.5]""##,
    ),
    (r##"cjson.encode_keep_buffer()"##, r##"true | true"##),
    (r##"cjson.encode_keep_buffer(false)"##, r##"true | false"##),
    (r##"cjson.encode_keep_buffer('off')"##, r##"true | false"##),
    (r##"cjson.encode_keep_buffer('on')"##, r##"true | true"##),
    (
        r##"cjson.encode_keep_buffer('null')"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_keep_buffer' (invalid option 'null')""##,
    ),
    (
        r##"cjson.encode_keep_buffer(1)"##,
        r##"false | "user_script:1: bad argument #1 to 'encode_keep_buffer' (invalid option '1')""##,
    ),
    (r##"cjson.decode_invalid_numbers()"##, r##"true | true"##),
    (
        r##"cjson.decode_invalid_numbers(false)"##,
        r##"true | false"##,
    ),
    (
        r##"cjson.decode_invalid_numbers('yes')"##,
        r##"false | "user_script:1: bad argument #1 to 'decode_invalid_numbers' (invalid option 'yes')""##,
    ),
    (r##"cjson.decode_max_depth()"##, r##"true | 1000"##),
    (r##"cjson.decode_max_depth(10)"##, r##"true | 10"##),
    (
        r##"cjson.decode_max_depth(-1)"##,
        r##"false | "user_script:1: bad argument #1 to 'decode_max_depth' (expected integer between 1 and 2147483647)""##,
    ),
    (
        r##"cjson.encode()"##,
        r##"false | "user_script:1: bad argument #1 to 'encode' (expected 1 argument)""##,
    ),
    (
        r##"cjson.encode(1, 2)"##,
        r##"false | "user_script:1: bad argument #1 to 'encode' (expected 1 argument)""##,
    ),
    (
        r##"cjson.decode()"##,
        r##"false | "user_script:1: bad argument #1 to 'decode' (expected 1 argument)""##,
    ),
    (
        r##"cjson.decode('[1]', 2)"##,
        r##"false | "user_script:1: bad argument #1 to 'decode' (expected 1 argument)""##,
    ),
    (
        r##"cjson.decode({})"##,
        r##"false | "user_script:1: bad argument #1 to 'decode' (string expected, got table)""##,
    ),
    (r##"cjson.decode(123)"##, r##"true | 123"##),
    (r##"cjson.decode('123')"##, r##"true | 123"##),
    (r##"cjson.decode('"abc"')"##, r##"true | "abc""##),
    (
        r##"cjson.decode('[1, 2, 3]')"##,
        r##"true | {[1]=1,[2]=2,[3]=3}"##,
    ),
    (
        r##"cjson.decode('{"a": 1, "b": [true, false, null]}')"##,
        r##"true | {["a"]=1,["b"]={[1]=true,[2]=false,[3]=null}}"##,
    ),
    (
        r##"cjson.decode('{"a": {"b": {"c": {}}}}')"##,
        r##"true | {["a"]={["b"]={["c"]={}}}}"##,
    ),
    (r##"cjson.decode('[]')"##, r##"true | {}"##),
    (r##"cjson.decode('{}')"##, r##"true | {}"##),
    (r##"cjson.decode('null')"##, r##"true | null"##),
    (r##"cjson.decode('true')"##, r##"true | true"##),
    (r##"cjson.decode('false')"##, r##"true | false"##),
    (
        r##"cjson.decode(' \t\r\n [ 1 , 2 ] \n')"##,
        r##"true | {[1]=1,[2]=2}"##,
    ),
    (
        r##"cjson.decode('"\\"\\\\\\/\\b\\f\\n\\r\\t"')"##,
        r##"true | "\"\\/\8\12\\10\r\9""##,
    ),
    (
        r##"cjson.decode('"\\u0041\\u00e9\\u20ac\\ud83d\\ude00"')"##,
        r##"true | "A\195\169\226\130\172\240\159\152\128""##,
    ),
    (r##"cjson.decode('"\\u0000"')"##, r##"true | "\000""##),
    (
        r##"cjson.decode('"\\uDBFF\\uDFFF"')"##,
        r##"true | "\244\143\191\191""##,
    ),
    (
        r##"cjson.decode('"\\ud800\\u0041"')"##,
        r##"false | "user_script:1: Expected value but found invalid unicode escape code at character 2""##,
    ),
    (
        r##"cjson.decode('"\\udc00"')"##,
        r##"false | "user_script:1: Expected value but found invalid unicode escape code at character 2""##,
    ),
    (
        r##"cjson.decode('"\\ud800"')"##,
        r##"false | "user_script:1: Expected value but found invalid unicode escape code at character 2""##,
    ),
    (
        r##"cjson.decode('"\\ud800x"')"##,
        r##"false | "user_script:1: Expected value but found invalid unicode escape code at character 2""##,
    ),
    (
        r##"cjson.decode('"\\u12"')"##,
        r##"false | "user_script:1: Expected value but found invalid unicode escape code at character 2""##,
    ),
    (
        r##"cjson.decode('"\\u12g4"')"##,
        r##"false | "user_script:1: Expected value but found invalid unicode escape code at character 2""##,
    ),
    (
        r##"cjson.decode('"a\\qb"')"##,
        r##"false | "user_script:1: Expected value but found invalid escape code at character 3""##,
    ),
    (
        r##"cjson.decode('"abc')"##,
        r##"false | "user_script:1: Expected value but found unexpected end of string at character 5""##,
    ),
    (r##"cjson.decode('"a\tb\1c"')"##, r##"true | "a\9b\1c""##),
    (r##"cjson.decode('"\200\255"')"##, r##"true | "\200\255""##),
    (
        r##"cjson.decode('[1,2')"##,
        r##"false | "user_script:1: Expected comma or array end but found T_END at character 5""##,
    ),
    (
        r##"cjson.decode('[1 2]')"##,
        r##"false | "user_script:1: Expected comma or array end but found T_NUMBER at character 4""##,
    ),
    (
        r##"cjson.decode('[1,]')"##,
        r##"false | "user_script:1: Expected value but found T_ARR_END at character 4""##,
    ),
    (
        r##"cjson.decode('[,]')"##,
        r##"false | "user_script:1: Expected value but found T_COMMA at character 2""##,
    ),
    (
        r##"cjson.decode('{"a":1,}')"##,
        r##"false | "user_script:1: Expected object key string but found T_OBJ_END at character 8""##,
    ),
    (
        r##"cjson.decode('{"a":1 "b":2}')"##,
        r##"false | "user_script:1: Expected comma or object end but found T_STRING at character 8""##,
    ),
    (
        r##"cjson.decode('{"a"}')"##,
        r##"false | "user_script:1: Expected colon but found T_OBJ_END at character 5""##,
    ),
    (
        r##"cjson.decode('{1:2}')"##,
        r##"false | "user_script:1: Expected object key string but found T_NUMBER at character 2""##,
    ),
    (
        r##"cjson.decode('{"a" 2}')"##,
        r##"false | "user_script:1: Expected colon but found T_NUMBER at character 6""##,
    ),
    (
        r##"cjson.decode('{"a":}')"##,
        r##"false | "user_script:1: Expected value but found T_OBJ_END at character 6""##,
    ),
    (
        r##"cjson.decode('{')"##,
        r##"false | "user_script:1: Expected object key string but found T_END at character 2""##,
    ),
    (
        r##"cjson.decode('[')"##,
        r##"false | "user_script:1: Expected value but found T_END at character 2""##,
    ),
    (
        r##"cjson.decode(']')"##,
        r##"false | "user_script:1: Expected value but found T_ARR_END at character 1""##,
    ),
    (
        r##"cjson.decode('}')"##,
        r##"false | "user_script:1: Expected value but found T_OBJ_END at character 1""##,
    ),
    (
        r##"cjson.decode(':')"##,
        r##"false | "user_script:1: Expected value but found T_COLON at character 1""##,
    ),
    (
        r##"cjson.decode(',')"##,
        r##"false | "user_script:1: Expected value but found T_COMMA at character 1""##,
    ),
    (
        r##"cjson.decode('[1] x')"##,
        r##"false | "user_script:1: Expected the end but found invalid token at character 5""##,
    ),
    (
        r##"cjson.decode('[1] [2]')"##,
        r##"false | "user_script:1: Expected the end but found T_ARR_BEGIN at character 5""##,
    ),
    (
        r##"cjson.decode('')"##,
        r##"false | "user_script:1: Expected value but found T_END at character 1""##,
    ),
    (
        r##"cjson.decode(' ')"##,
        r##"false | "user_script:1: Expected value but found T_END at character 2""##,
    ),
    (
        r##"cjson.decode('tru')"##,
        r##"false | "user_script:1: Expected value but found invalid token at character 1""##,
    ),
    (
        r##"cjson.decode('truex')"##,
        r##"false | "user_script:1: Expected the end but found invalid token at character 5""##,
    ),
    (
        r##"cjson.decode('nul')"##,
        r##"false | "user_script:1: Expected value but found invalid token at character 1""##,
    ),
    (
        r##"cjson.decode('falsey')"##,
        r##"false | "user_script:1: Expected the end but found invalid token at character 6""##,
    ),
    (
        r##"cjson.decode('TRUE')"##,
        r##"false | "user_script:1: Expected value but found invalid token at character 1""##,
    ),
    (
        r##"cjson.decode('x')"##,
        r##"false | "user_script:1: Expected value but found invalid token at character 1""##,
    ),
    (
        r##"cjson.decode('-')"##,
        r##"false | "user_script:1: Expected value but found invalid number at character 1""##,
    ),
    (
        r##"cjson.decode('-a')"##,
        r##"false | "user_script:1: Expected value but found invalid number at character 1""##,
    ),
    (r##"cjson.decode('1.')"##, r##"true | 1"##),
    (r##"cjson.decode('1.5e3')"##, r##"true | 1500"##),
    (
        r##"cjson.decode('1e')"##,
        r##"false | "user_script:1: Expected the end but found invalid token at character 2""##,
    ),
    (r##"cjson.decode('1E+2')"##, r##"true | 100"##),
    (r##"cjson.decode('-0')"##, r##"true | -0"##),
    (r##"cjson.decode('0x1F')"##, r##"true | 31"##),
    (
        r##"cjson.decode('0x')"##,
        r##"false | "user_script:1: Expected the end but found invalid token at character 2""##,
    ),
    (r##"cjson.decode('0X1p4')"##, r##"true | 16"##),
    (r##"cjson.decode('Infinity')"##, r##"true | inf"##),
    (r##"cjson.decode('-Infinity')"##, r##"true | -inf"##),
    (r##"cjson.decode('inf')"##, r##"true | inf"##),
    (r##"cjson.decode('-inf')"##, r##"true | -inf"##),
    (r##"cjson.decode('INF')"##, r##"true | inf"##),
    (r##"cjson.decode('+5')"##, r##"true | 5"##),
    (
        r##"cjson.decode('+')"##,
        r##"false | "user_script:1: Expected value but found invalid number at character 1""##,
    ),
    (r##"cjson.decode('012')"##, r##"true | 12"##),
    (r##"cjson.decode('-012')"##, r##"true | -12"##),
    (r##"cjson.decode('nan')"##, r##"true | nan"##),
    (r##"cjson.decode('NaN')"##, r##"true | nan"##),
    (r##"cjson.decode('-nan')"##, r##"true | -nan"##),
    (r##"cjson.decode('nan(123)')"##, r##"true | nan"##),
    (r##"cjson.decode('1e5')"##, r##"true | 100000"##),
    (r##"cjson.decode('1e400')"##, r##"true | inf"##),
    (
        r##"cjson.decode('.5')"##,
        r##"false | "user_script:1: Expected value but found invalid token at character 1""##,
    ),
    (
        r##"cjson.decode('123456789012345678901234567890')"##,
        r##"true | 1.2345678901235e+29"##,
    ),
    (r##"cjson.decode('0.1')"##, r##"true | 0.1"##),
    (
        r##"cjson.decode('2.2250738585072011e-308')"##,
        r##"true | 2.2250738585072e-308"##,
    ),
    (
        r##"cjson.decode('a\0')"##,
        r##"false | "user_script:1: JSON parser does not support UTF-16 or UTF-32""##,
    ),
    (
        r##"cjson.decode('\0a')"##,
        r##"false | "user_script:1: JSON parser does not support UTF-16 or UTF-32""##,
    ),
    (r##"cjson.decode('[1]\0xx')"##, r##"true | {[1]=1}"##),
    (
        r##"cjson.decode('"a\0b"')"##,
        r##"false | "user_script:1: Expected value but found unexpected end of string at character 3""##,
    ),
    (
        r##"cjson.decode('1\0')"##,
        r##"false | "user_script:1: JSON parser does not support UTF-16 or UTF-32""##,
    ),
    (
        r##"cjson.decode('[1,\0 2]')"##,
        r##"false | "user_script:1: Expected value but found T_END at character 4""##,
    ),
    (
        r##"(function() cjson.decode_invalid_numbers(false) return cjson.decode('0x10') end)()"##,
        r##"false | "user_script:1: Expected value but found invalid number at character 1""##,
    ),
    (
        r##"(function() cjson.decode_invalid_numbers(false) return cjson.decode('Infinity') end)()"##,
        r##"false | "user_script:1: Expected value but found invalid token at character 1""##,
    ),
    (
        r##"(function() cjson.decode_invalid_numbers(false) return cjson.decode('[01]') end)()"##,
        r##"false | "user_script:1: Expected value but found invalid number at character 2""##,
    ),
    (
        r##"(function() cjson.decode_invalid_numbers(false) return cjson.decode('-') end)()"##,
        r##"false | "user_script:1: Expected value but found invalid number at character 1""##,
    ),
    (
        r##"(function() cjson.decode_invalid_numbers(false) return cjson.decode('+1') end)()"##,
        r##"false | "user_script:1: Expected value but found invalid token at character 1""##,
    ),
    (
        r##"(function() cjson.decode_invalid_numbers(false) return cjson.decode('-nan') end)()"##,
        r##"false | "user_script:1: Expected value but found invalid number at character 1""##,
    ),
    (
        r##"(function() cjson.decode_invalid_numbers(false) return cjson.decode('[1.5, -0, 0]') end)()"##,
        r##"true | {[1]=1.5,[2]=-0,[3]=0}"##,
    ),
    (
        r##"(function() cjson.decode_max_depth(1) return cjson.decode('[[1]]') end)()"##,
        r##"false | "user_script:1: Found too many nested data structures (2) at character 2""##,
    ),
    (
        r##"(function() cjson.decode_max_depth(1) return cjson.decode('[1]') end)()"##,
        r##"true | {[1]=1}"##,
    ),
    (
        r##"(function() cjson.decode_max_depth(2) return cjson.decode(' {"a" : [ {}]}') end)()"##,
        r##"false | "user_script:1: Found too many nested data structures (3) at character 11""##,
    ),
    (
        r##"(function() cjson.decode_max_depth(2) return cjson.decode('[[], [], {"a": []}]') end)()"##,
        r##"false | "user_script:1: Found too many nested data structures (3) at character 16""##,
    ),
    (
        r##"#cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000))"##,
        r##"true | 1"##,
    ),
    (
        r##"cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))"##,
        r##"false | "user_script:1: Found too many nested data structures (1001) at character 1001""##,
    ),
    (
        r##"(function() cjson.decode_max_depth(100000) return #cjson.decode(string.rep('[', 3998) .. string.rep(']', 3998)) end)()"##,
        r##"true | 1"##,
    ),
    (
        r##"(function() cjson.decode_max_depth(100000) return cjson.decode(string.rep('[', 3999) .. string.rep(']', 3999)) end)()"##,
        r##"true | {[1]={[1]={[1]={[1]={[1]={[1]={...}}}}}}}"##,
    ),
    (
        r##"(function() cjson.decode_max_depth(100000) return cjson.decode(string.rep('{"a":', 2665) .. '1' .. string.rep('}', 2665)) ~= nil end)()"##,
        r##"true | true"##,
    ),
    (
        r##"(function() cjson.decode_max_depth(100000) return cjson.decode(string.rep('{"a":', 2666) .. '1' .. string.rep('}', 2666)) end)()"##,
        r##"true | {["a"]={["a"]={["a"]={["a"]={["a"]={["a"]={...}}}}}}}"##,
    ),
    (
        r##"cjson.decode('{"a":1,"a":2}')"##,
        r##"true | {["a"]=2}"##,
    ),
    (
        r##"cjson.decode('{"1":1,"2":2}')"##,
        r##"true | {["1"]=1,["2"]=2}"##,
    ),
    (
        r##"cjson.decode(cjson.encode({a = {1, 2, {b = 'x'}}, c = 'd'}))"##,
        r##"true | {["a"]={[1]=1,[2]=2,[3]={["b"]="x"}},["c"]="d"}"##,
    ),
    (
        r##"cjson.encode(cjson.decode('[1,{"a":null},[]]'))"##,
        r##"true | "[1,{\"a\":null},{}]""##,
    ),
    (r##"cjson.null"##, r##"true | null"##),
    (r##"cjson._NAME"##, r##"true | "cjson""##),
    (r##"cjson._VERSION"##, r##"true | "2.1.0""##),
    (r##"type(cjson.new)"##, r##"true | "function""##),
    (
        r##"(function() local c = cjson.new() c.encode_max_depth(1) return {c.encode_max_depth(), cjson.encode_max_depth()} end)()"##,
        r##"true | {[1]=1,[2]=1000}"##,
    ),
    (
        r##"(function() local c = cjson.new() return {c._NAME, c._VERSION, c.null == cjson.null, type(c.new)} end)()"##,
        r##"true | {[1]="cjson",[2]="2.1.0",[3]=true,[4]="function"}"##,
    ),
    (
        r##"(function() local c = cjson.new() return c.encode({1, 2, {a = 3}}) end)()"##,
        r##"true | "[1,2,{\"a\":3}]""##,
    ),
    (
        r##"(function() local f = cjson.encode return f() end)()"##,
        r##"false | "user_script:1: bad argument #1 to 'f' (expected 1 argument)""##,
    ),
    (
        r##"pcall(cjson.encode)"##,
        r##"true | false | "bad argument #1 to '?' (expected 1 argument)""##,
    ),
    (
        r##"pcall(cjson.decode, '[')"##,
        r##"true | false | "Expected value but found T_END at character 2""##,
    ),
    (
        r##"#cjson.encode((function() local t = {} for i = 1, 9000 do t['k' .. i] = 'v' .. i end return t end)())"##,
        r##"true | 141787"##,
    ),
    (
        r##"#cjson.encode((function() local t = {} for i = 1, 9000 do t[i] = 'v' .. i end return t end)())"##,
        r##"true | 70894"##,
    ),
    (
        r##"#cjson.decode(cjson.encode((function() local t = {} for i = 1, 9000 do t['k' .. i] = 'v' .. i end return t end)()))"##,
        r##"true | 0"##,
    ),
    (
        r##"cjson.decode(cjson.encode((function() local t = {} for i = 1, 9000 do t['k' .. i] = 'v' .. i end return t end)())).k8999"##,
        r##"true | "v8999""##,
    ),
    (
        r##"(function() local s = cjson.encode((function() local t = {} for i = 1, 1500 do local u = {} for j = 1, 3 do u['k' .. j] = j end t['o' .. i] = u end return t end)()) local sum = 0 for i = 1, #s do sum = (sum * 31 + string.byte(s, i)) % 1000000007 end return {#s, sum} end)()"##,
        r##"true | {[1]=45394,[2]=990202774}"##,
    ),
    (
        r##"(function() local s = cjson.encode((function() local t = {} for i = 1, 3 do local u = {} for j = 1, 3000 do u['k' .. j] = {j, 'x'} end t['o' .. i] = u end return t end)()) local sum = 0 for i = 1, #s do sum = (sum * 31 + string.byte(s, i)) % 1000000007 end return {#s, sum} end)()"##,
        r##"true | {[1]=164380,[2]=848814697}"##,
    ),
    (
        r##"(function() local s = cjson.encode((function() local t = {} for i = 1, 2047 do t['k' .. i] = {a = i} end return t end)()) local sum = 0 for i = 1, #s do sum = (sum * 31 + string.byte(s, i)) % 1000000007 end return {#s, sum} end)()"##,
        r##"true | {[1]=36680,[2]=161983301}"##,
    ),
    (
        r##"(function() local s = cjson.encode((function() local t = {} for i = 1, 2049 do t['k' .. i] = {a = i} end return t end)()) local sum = 0 for i = 1, #s do sum = (sum * 31 + string.byte(s, i)) % 1000000007 end return {#s, sum} end)()"##,
        r##"true | {[1]=36718,[2]=42427428}"##,
    ),
    (
        r##"(function() local s = cjson.encode((function() local t = {} local c = t for i = 1, 600 do c.x = {i, {y = i}} c = c.x end return t end)()) local sum = 0 for i = 1, #s do sum = (sum * 31 + string.byte(s, i)) % 1000000007 end return {#s, sum} end)()"##,
        r##"true | {[1]=16577,[2]=736509801}"##,
    ),
    (
        r##"(function() local s = cmsgpack.pack((function() local t = {} for i = 1, 1500 do local u = {} for j = 1, 3 do u['k' .. j] = j end t['o' .. i] = u end return t end)()) local sum = 0 for i = 1, #s do sum = (sum * 31 + string.byte(s, i)) % 1000000007 end return {#s, sum} end)()"##,
        r##"true | {[1]=27396,[2]=616229193}"##,
    ),
    (
        r##"(function() local s = cmsgpack.pack((function() local t = {} for i = 1, 3 do local u = {} for j = 1, 3000 do u['k' .. j] = {j, 'x'} end t['o' .. i] = u end return t end)()) local sum = 0 for i = 1, #s do sum = (sum * 31 + string.byte(s, i)) % 1000000007 end return {#s, sum} end)()"##,
        r##"true | {[1]=103552,[2]=873264528}"##,
    ),
    (
        r##"(function() local t = cjson.decode(cjson.encode((function() local t = {} local c = t for i = 1, 600 do c.x = {i, {y = i}} c = c.x end return t end)())) return #cjson.encode(t) end)()"##,
        r##"true | 16577"##,
    ),
    (
        r##"(function() local t = cmsgpack.unpack(cmsgpack.pack((function() local t = {} for i = 1, 1500 do local u = {} for j = 1, 3 do u['k' .. j] = j end t['o' .. i] = u end return t end)())) return #cmsgpack.pack(t) end)()"##,
        r##"true | 27396"##,
    ),
    (
        r##"(function() local s = string.rep('\145', 600) .. '\1' local t = cmsgpack.unpack(s) for i = 1, 599 do t = t[1] end return t[1] end)()"##,
        r##"true | 1"##,
    ),
    (
        r##"(function() local s = string.rep('\129\161a', 600) .. '\1' local t = cmsgpack.unpack(s) for i = 1, 599 do t = t.a end return t.a end)()"##,
        r##"true | 1"##,
    ),
    (
        r##"(function() cjson.encode_number_precision(2) return cjson.encode({[1.2345] = 1.2345, [100.5] = 3}) end)()"##,
        r##"true | "{\"1.2\":1.2,\"1e+02\":3}""##,
    ),
    (
        r##"cjson.encode({[1] = 'a', [2] = 'b', x = 1})"##,
        r##"true | "{\"1\":\"a\",\"2\":\"b\",\"x\":1}""##,
    ),
    (
        r##"cjson.encode({[1] = 'a', [2.5] = 'b'})"##,
        r##"true | "{\"1\":\"a\",\"2.5\":\"b\"}""##,
    ),
    (
        r##"cjson.encode({['1'] = 'a'})"##,
        r##"true | "{\"1\":\"a\"}""##,
    ),
    (
        r##"cjson.encode({[0.5] = 1})"##,
        r##"true | "{\"0.5\":1}""##,
    ),
    (
        r##"cjson.encode({{}, {{}}, {a = {}}})"##,
        r##"true | "[{},[{}],{\"a\":{}}]""##,
    ),
    (
        r##"cjson.encode({1, 2, {3, {4, {5}}}})"##,
        r##"true | "[1,2,[3,[4,[5]]]]""##,
    ),
    (
        r##"cjson.encode(string.rep('x', 40) .. '/' .. string.rep('y', 40))"##,
        r##"true | "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\"""##,
    ),
    (
        r##"cjson.decode('[1,2,3,{"a":[4,5,{"b":6}]}]')[4].a[3].b"##,
        r##"true | 6"##,
    ),
    (
        r##"cjson.decode('{"a":{"b":{"c":[1,[2,[3]]]}}}').a.b.c[2][2][1]"##,
        r##"true | 3"##,
    ),
    (r##"cjson.decode('  "x"  ')"##, r##"true | "x""##),
    (
        r##"cjson.decode('1 2')"##,
        r##"false | "user_script:1: Expected the end but found T_NUMBER at character 3""##,
    ),
    (
        r##"cjson.decode('[1]]')"##,
        r##"false | "user_script:1: Expected the end but found T_ARR_END at character 4""##,
    ),
    (
        r##"cjson.decode('{"a":1}}')"##,
        r##"false | "user_script:1: Expected the end but found T_OBJ_END at character 8""##,
    ),
    (
        r##"cjson.decode('[[[[]]]]')"##,
        r##"true | {[1]={[1]={[1]={}}}}"##,
    ),
    (r##"cjson.decode('{"":1}')"##, r##"true | {[""]=1}"##),
    (
        r##"cjson.decode('{"a":[],"b":{}}')"##,
        r##"true | {["a"]={},["b"]={}}"##,
    ),
    (
        r##"cjson.decode('"\\u00"')"##,
        r##"false | "user_script:1: Expected value but found invalid unicode escape code at character 2""##,
    ),
    (
        r##"cjson.decode('"\\u0080\\u07ff\\u0800\\uffff"')"##,
        r##"true | "\194\128\223\191\224\160\128\239\191\191""##,
    ),
    (
        r##"cjson.decode('[1e-400, -1e-400, 1e308, 1.7976931348623157e308, 4.9e-324]')"##,
        r##"true | {[1]=0,[2]=-0,[3]=1e+308,[4]=1.7976931348623e+308,[5]=4.9406564584125e-324}"##,
    ),
    (r##"cjson.decode('0.0000001')"##, r##"true | 1e-07"##),
    (r##"cjson.decode('-0.0')"##, r##"true | -0"##),
    (
        r##"(function() cjson.decode_max_depth(3) return cjson.decode('{"a":{"b":{"c":1}}}') ~= nil end)()"##,
        r##"true | true"##,
    ),
    (
        r##"(function() cjson.decode_max_depth(3) return cjson.decode('{"a":{"b":{"c":{}}}}') end)()"##,
        r##"false | "user_script:1: Found too many nested data structures (4) at character 16""##,
    ),
    (
        r##"(function() cjson.encode_sparse_array(true, 1, 0) return cjson.encode({[1] = 1, [3] = 1}) end)()"##,
        r##"true | "{\"1\":1,\"3\":1}""##,
    ),
    (
        r##"(function() cjson.encode_sparse_array(false, 1, 0) return cjson.encode({[1] = 1, [2] = 1}) end)()"##,
        r##"true | "[1,1]""##,
    ),
    (
        r##"(function() cjson.encode_sparse_array(false, 1, 0) return cjson.encode({[1] = 1, [3] = 1}) end)()"##,
        r##"false | "user_script:1: Cannot serialise table: excessively sparse array""##,
    ),
    (
        r##"(function() cjson.encode_keep_buffer(false) return cjson.encode({1, 2}) end)()"##,
        r##"true | "[1,2]""##,
    ),
];
