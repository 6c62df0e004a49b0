-- Firn's Lua sandbox, run once per VM with the real globals table. It
-- gives scripts Redis 7.0.15's environment: globals, library tables and
-- the strings' metatable are read-only (writes fail with "Attempt to
-- modify a readonly table"), reading an undeclared global fails, binary
-- chunks cannot be loaded, and `redis.call`/`redis.pcall` raise or return
-- Redis's error tables.
--
-- Stock Lua 5.1 has no read-only tables, so each protected table is an
-- empty proxy whose reads fall through to the real one (`readonly.rs`
-- says why, and replaces `rawset`, `rawget`, `next`, `pairs`,
-- `setmetatable`, `getmetatable`, `table.insert` and `table.foreach` by
-- functions that see through proxies once this chunk has run). As in
-- Redis, protection is recursive: every table reachable from a protected
-- one is protected.
--
-- Arguments: the debug library (kept as an upvalue only), a function that
-- turns a non-table error into its text, the texts of the errors that end
-- a run (SCRIPT KILL, an abandoned run: `pcall` and `xpcall` never stop
-- those), the registry tables that record proxies (proxy -> real,
-- real -> proxy, proxy -> the metatable `getmetatable` shows), and the
-- `__index` of the globals that fails on an undeclared name.
local dbg, errtext, killed_text, abandoned_text, real_of, proxy_of, shown_meta, missing_global = ...
local G = _G
local rawset_, rawget_, setmetatable_, getmetatable_, next_ = rawset, rawget, setmetatable, getmetatable, next
local setfenv_, loadstring_, type_, error_, tostring_ = setfenv, loadstring, type, error, tostring
local concat_ = table.concat

local function readonly_error()
  error_('Attempt to modify a readonly table', 2)
end

-- The proxy of `t` (made once), and of every table `t` holds. `shown`
-- is what `getmetatable` returns for the proxy.
local function readonly(t, shown)
  local proxy = proxy_of[t]
  if proxy then
    return proxy
  end
  proxy = {}
  proxy_of[t] = proxy
  real_of[proxy] = t
  shown_meta[proxy] = shown
  -- The mark (`firn_lua_libs::READONLY_MARK`) lets the encoders read `t`.
  setmetatable_(proxy, { __index = t, __newindex = readonly_error, __firn_readonly = true })
  for k, v in next_, t do
    if type_(v) == 'table' and real_of[v] == nil then
      rawset_(t, k, readonly(v))
    end
  end
  return proxy
end

setmetatable_(G, { __index = missing_global })

-- What `getmetatable` shows for the globals: a read-only
-- `{__index = missing_global}`, as Redis's `luaSetErrorMetatable` makes.
local function error_meta()
  return readonly({ __index = missing_global })
end

local proxy_G

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

-- Lua 5.1's `load` takes only a reader function (`readonly.rs` checks
-- the arguments of `load` and `loadstring` before these run).
G.load = function(reader, name)
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

proxy_G = readonly(G, error_meta())
-- The strings' metatable (its `__index` becomes the `string` proxy).
-- Nothing else holds its proxy, so the factory keeps it alive.
local kept = { readonly(getmetatable_('')) }

local function make_readonly(t, shown)
  local _ = kept
  return readonly(t, shown)
end

-- The runner: calls a script's function under the error handler.
return proxy_G, readonly_error, missing_global, function(f, keys, args)
  local handler = G.__redis__err__handler
  if keys == nil then
    return xpcall_(f, handler)
  end
  return xpcall_(function()
    return f(keys, args)
  end, handler)
end, make_readonly, error_meta
