-- Firn's Lua sandbox, run once per VM with the real globals table. It
-- gives scripts Redis 7.0.15's environment: globals and library tables are
-- read-only (writes fail with "Attempt to modify a readonly table"),
-- reading an undeclared global fails, binary chunks cannot be loaded, and
-- `redis.call`/`redis.pcall` raise or return Redis's error tables.
--
-- Stock Lua 5.1 has no read-only tables, so each protected table is an
-- empty proxy whose reads fall through to the real one. `rawset`,
-- `rawget`, `setmetatable`, `next` and `pairs` see through proxies.
--
-- Arguments: the debug library (kept as an upvalue only), and a function
-- that turns a non-table error into its text.
-- The texts of the errors that end a run (SCRIPT KILL, an abandoned run)
-- follow: `pcall` and `xpcall` never stop those.
local dbg, errtext, killed_text, abandoned_text = ...
local G = _G
local rawset_, rawget_, setmetatable_, next_, pairs_ = rawset, rawget, setmetatable, next, pairs
local setfenv_, loadstring_, type_, error_, tostring_ = setfenv, loadstring, type, error, tostring
local concat_ = table.concat

local real_of = setmetatable_({}, { __mode = 'k' })

local function readonly_error()
  error_('Attempt to modify a readonly table', 2)
end

local function readonly(t)
  local proxy = {}
  real_of[proxy] = t
  setmetatable_(proxy, { __index = t, __newindex = readonly_error })
  return proxy
end

local proxy_G = readonly(G)

local function missing_global(_, n)
  error_("Script attempted to access nonexistent global variable '" .. tostring_(n) .. "'", 2)
end
setmetatable_(G, { __index = missing_global })

G.rawset = function(t, k, v)
  if real_of[t] then
    error_('Attempt to modify a readonly table', 0)
  end
  local r = rawset_(t, k, v)
  return r
end

G.rawget = function(t, k)
  local real = real_of[t]
  if real then
    return rawget_(real, k)
  end
  local r = rawget_(t, k)
  return r
end

G.setmetatable = function(t, mt)
  if real_of[t] then
    error_('Attempt to modify a readonly table', 0)
  end
  local r = setmetatable_(t, mt)
  return r
end

G.next = function(t, k)
  local real = real_of[t]
  if real then
    return next_(real, k)
  end
  local a, b = next_(t, k)
  return a, b
end

G.pairs = function(t)
  local real = real_of[t]
  if real then
    return next_, real, nil
  end
  local a, b, c = pairs_(t)
  return a, b, c
end

-- Redis's Lua refuses precompiled chunks: its parser reads them as text.
local function chunkid(s)
  local first = s:match('^[^%z\r\n]*')
  if #first < #s and #first > 45 or #first > 45 then
    first = first:sub(1, 45) .. '...'
  elseif #first < #s and s:byte(#first + 1) ~= 0 then
    first = first .. '...'
  end
  return '[string "' .. first .. '"]'
end

G.loadstring = function(s, name)
  if type_(s) == 'string' and s:byte(1) == 27 then
    local id = name and tostring_(name) or chunkid(s)
    return nil, id .. ":1: unexpected symbol near 'char(27)'"
  end
  local f, e = loadstring_(s, name)
  if f then
    setfenv_(f, proxy_G)
  end
  return f, e
end

G.load = function(reader, name)
  if type_(reader) ~= 'function' then
    local f, e = loadstring_(reader, name)
    return f, e
  end
  local parts = {}
  while true do
    local piece = reader()
    if piece == nil or piece == '' then
      break
    end
    parts[#parts + 1] = piece
  end
  return G.loadstring(concat_(parts), name or '=(load)')
end

G.__redis__err__handler = function(err)
  local level = 2
  local i = dbg.getinfo(level, 'nSl')
  if i and i.what == 'C' then
    level = level + 1
    i = dbg.getinfo(level, 'nSl')
  end
  if i and i.what == 'tail' then
    i = nil
  elseif i and i.source == '=firn' then
    level = level + 1
    i = dbg.getinfo(level, 'nSl')
  end
  if type_(err) ~= 'table' then
    err = { err = errtext(err) }
  end
  if i then
    err['source'] = i.source
    err['line'] = i.currentline
  end
  return err
end

-- Redis 7.0's own pcall: an error table caught becomes its `err` text
-- (and a server function's error its text).
local pcall_, xpcall_ = pcall, xpcall

local function fatal(e)
  local text = e
  if type_(e) == 'table' then
    text = rawget_(e, 'err')
  elseif type_(e) == 'userdata' then
    text = errtext(e, true)
  end
  return text == killed_text or text == abandoned_text
end

local function caught(ok, ...)
  if ok then
    return true, ...
  end
  local e = ...
  if fatal(e) then
    error_(e, 0)
  end
  if type_(e) == 'table' then
    local text = e.err
    if type_(text) == 'string' then
      e = text
    end
  elseif type_(e) == 'userdata' then
    e = errtext(e, true)
  end
  return false, e
end
G.xpcall = function(f, handler)
  local function guarded(e)
    if fatal(e) then
      return e
    end
    return handler(e)
  end
  local function rethrow(ok, ...)
    if not ok and fatal((...)) then
      error_((...), 0)
    end
    return ok, ...
  end
  return rethrow(xpcall_(f, guarded))
end

G.pcall = function(...)
  if select('#', ...) == 0 then
    return false, 'attempt to call a boolean value'
  end
  return caught(pcall_(...))
end

for _, name in ipairs({ 'string', 'math', 'table', 'coroutine', 'redis', 'bit', 'cjson', 'struct', 'cmsgpack' }) do
  local lib = rawget_(G, name)
  if type_(lib) == 'table' then
    rawset_(G, name, readonly(lib))
  end
end
rawset_(G, '_G', proxy_G)

-- The runner: calls a script's function under the error handler.
return proxy_G, readonly_error, missing_global, function(f, keys, args)
  local handler = G.__redis__err__handler
  if keys == nil then
    return xpcall_(f, handler)
  end
  return xpcall_(function()
    return f(keys, args)
  end, handler)
end
