#!/usr/bin/env python3
"""Regenerates redis_fuzz_cases.txt: random library inputs run on a
redis-server 7.0.15 through the catalogue's wrapper (see redis_cases.py).
Each case is two lines: the expression, then Redis's result.

Usage: python3 redis_fuzz.py <seed> <redis port> > redis_fuzz_cases.txt
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis_cases as rc  # noqa: E402

rnd = random.Random(int(sys.argv[1]))
PORT = int(sys.argv[2])
def lua_bytes(b):
    return "'" + ''.join('\\%d' % c for c in b) + "'"
json_atoms = ['1', '-2.5e3', '"a"', '"\\u00e9"', 'true', 'false', 'null', '[]', '{}', '0x1f', 'nan', '-inf', '"\\n"', '1e400', '01', '-', '"\\ud83d\\ude00"', '"\\x"']
def rand_json(d=0):
    r = rnd.random()
    if d > 3 or r < 0.4: return rnd.choice(json_atoms)
    if r < 0.7: return '[' + ','.join(rand_json(d+1) for _ in range(rnd.randint(0,3))) + ']'
    return '{' + ','.join('"k%d":%s' % (i, rand_json(d+1)) for i in range(rnd.randint(0,3))) + '}'
def mutate(s):
    b = bytearray(s.encode())
    for _ in range(rnd.randint(0, 2)):
        if b and rnd.random() < 0.5:
            i = rnd.randrange(len(b)); b[i] = rnd.choice(b' ,:[]{}"\\0-e.x\x00') 
        elif b:
            del b[rnd.randrange(len(b))]
    return bytes(b)
cases = []
for _ in range(300):
    cases.append('cjson.decode(%s)' % lua_bytes(mutate(rand_json())))
for _ in range(300):
    b = bytes(rnd.choice([0x90,0x91,0x92,0x81,0x82,0xa1,0xa2,0xc0,0xc2,0xc3,0xca,0xcb,0xcc,0xcd,0xce,0xcf,0xd0,0xd1,0xd2,0xd3,0xd9,0xda,0xdc,0xde,0x01,0x7f,0xe0,0xff,0x61,0x00,0xc1,0xc4]) for _ in range(rnd.randint(1, 12)))
    cases.append('cmsgpack.unpack(%s)' % lua_bytes(b))
for _ in range(200):
    fmt = ''.join(rnd.choice(['b','B','h','H','l','L','T','i','I','i3','I5','f','d','x','c2','c0','s','<','>','!','!2','!4',' ']) for _ in range(rnd.randint(1,5)))
    data = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 24)))
    cases.append("struct.unpack('%s', %s)" % (fmt, lua_bytes(data)))
    args = ', '.join(rnd.choice(['1', '-1', '300', '2.5', "'ab'", "'abcdef'", '1e10', '-0.0', 'nil']) for _ in range(rnd.randint(0, 5)))
    cases.append("struct.pack('%s'%s)" % (fmt, (', ' + args) if args else ''))
for _ in range(100):
    t = rand_json()
    cases.append("cjson.encode(cjson.decode('%s'))" % t.replace('\\', '\\\\'))
    cases.append("cmsgpack.pack(cjson.decode('%s'))" % t.replace('\\', '\\\\'))
def table_key():
    return rnd.choice(['1', '2', '3', '5', '11', '20', '0', '-1', '1.5', "'a'", "'b'",
                       "'1'", '2^31', '1e15', '0.1'])


def table_value(depth=0):
    if depth > 3 or rnd.random() < 0.5:
        return rnd.choice(['1', '-0.5', '1e300', '2^53', '0.1', '"x"', "'/\\\\'", 'true',
                           'false', 'cjson.null', '1/3', '-7', '255', '65536', '2^32',
                           '-2^31', '3.5e-5'])
    items = []
    for _ in range(rnd.randint(0, 5)):
        if rnd.random() < 0.5:
            items.append(table_value(depth + 1))
        else:
            items.append('[%s]=%s' % (table_key(), table_value(depth + 1)))
    return '{' + ', '.join(items) + '}'


for _ in range(400):
    t = table_value()
    cases += ['cjson.encode(%s)' % t, 'cmsgpack.pack(%s)' % t,
              'cmsgpack.unpack(cmsgpack.pack(%s))' % t]

for e in cases:
    r = rc.run(PORT, e)
    assert '\n' not in e and '\n' not in r
    sys.stdout.write(e + '\n' + r + '\n')
