--[[
Fixed window (see dev.sluice.algorithm.FixedWindow): windows of length W aligned to the Unix epoch;
window k = floor(t / W) admits while count_k + q <= C.

State: the string "k:count" (the window number and the permits it counted), "/numbers" when named.
Under other numbers (Inheritance.fixedWindow): the count of the old window holding now carries into
the new window holding now.
A denied call writes nothing.
Expiry (SET ... PX): (k+1)*W - t, the end of the window, rounded up to the millisecond.

Fields (after the code 'f'):  cost, C, unit (1000 when W is a whole number of microseconds, else 1),
                              W in that unit, unused
State reported:               k (-1 when fresh), count, 0   (as stored)
]]
local function f_load(key, i, base)
  local v = get_string(key, i)
  if not v then return -1, 0, 0 end
  local numbers = numbers_of(base)
  local s, was = split_numbers(v, i, numbers)
  local k, count = parse_window(s, i, false)
  if was == numbers then return k, count, 0 end
  local unit, wn = window_numbers(was, i)
  if k ~= window_of(wn, unit) or count == 0 then return -1, 0, 0, true end
  return window_of(tonumber(ARGV[base + 5]), tonumber(ARGV[base + 4])), count, 0, true
end

local function f_try(k0, count0, _, base)
  local q = tonumber(ARGV[base + 2])
  local c = tonumber(ARGV[base + 3])
  local k, e = window_of(tonumber(ARGV[base + 5]), tonumber(ARGV[base + 4]))
  local count = 0
  if k0 == k then count = count0 end
  -- the third state value carries e to f_save; it is never stored
  if count + q <= c then return true, k0, count0, 0, k, count + q, e end
  return false, k0, count0, 0, k, count, e
end

local function f_save(key, k, count, e, base)
  -- a state read under other numbers as fresh (written by a denied call): nothing to keep
  if k < 0 then return redis.call('DEL', key) end
  local unit = tonumber(ARGV[base + 4])
  local wn = tonumber(ARGV[base + 5])
  redis.call('SET', key, string.format('%d:%d', k, count) .. numbers_suffix(base), 'PX', ttl(units_to_ms(wn - e, unit)))
end

ALGOS['f'] = { f_load, f_try, f_save }
