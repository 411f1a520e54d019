--[[
Sluice: the part every script shares. Each script Sluice loads is this file, window_math.lua when a
window algorithm is in it, one or more algorithm files (gcra.lua, fixed_window.lua,
sliding_window.lua, sliding_log.lua) and run.lua, joined in that order once at start-up: the text is
constant, so it is loaded once and called with EVALSHA. (in_flight.lua, work in flight, is this file
and itself: it uses the time, ttl and ceil_div.)

Exactness. Lua 5.1 numbers are doubles, exact for integers below 2^53. Epoch nanoseconds (~1.8e18)
do not fit, epoch microseconds (~1.8e15) do, so time is kept in microseconds and every quantity the
scripts compute exactly stays below 2^53; the Java side rejects the few limits that would need more
(ScriptFields.checkExact) and computes the Decision's nanoseconds itself from what the script reports.
Numbers are written with string.format('%d'), which prints a C long: exact, unlike tostring.

Speed. Redis runs this whole chunk on every call, so it defines few functions, allocates few tables,
and a single permit (the common case) takes a path with no working tables at all.

KEYS[i]     the state of permit i (one key per (key, limit identity); a key repeated means the same state)
ARGV[1]     now in epoch microseconds, or '' to read the server clock with TIME
ARGV[2]     the least expiry in milliseconds (0 with server time; with a client ticker Redis's clock
            is not the ticker's, so keys are kept at least this long)
ARGV[3..]   nine fields per permit: algorithm code ('g' gcra/token bucket, 'f' fixed window,
            's' sliding window, 'l' sliding log), five algorithm fields (see each algorithm file), then
            the numbers (Limit.id()) of a named limit ('' unnamed) and, for gcra only, a stored value and
            what to read instead of it (both '' unless the caller converted it: see gcra.lua)

Numbers. An unnamed limit's key holds its numbers (the key is its id), so its value is the state alone.
A named limit's key is its identity (algorithm and name): its value is the state, '/', and the numbers
it was written under (a sliding log keeps them as a member "#numbers" of score -inf). A call with other
numbers reads that state under its own, as dev.sluice.algorithm.Inheritance does (what was spent
carries over): the windows in Lua; gcra's exact conversion needs 124-bit products, so the script
reports the value and the client converts it and calls again (see gcra.lua). The state read under new
numbers is written even when the call is denied, as if the change were a write of its own.

Reply: { now_us, committed (1/0), then per permit: allowed (1/0), r1, r2, r3 } where r1..r3 report
the state that permit saw (see each algorithm file); the caller computes the Decision from them.
{ now_us, -3, i, value }: permit i's gcra value was written under other numbers; nothing was written.
Errors: 'SLUICEWRONGTYPE i' (key i holds another Redis type), 'SLUICECORRUPT i' (a value Sluice did
not write); nothing is written when either is raised.
]]
local now_us
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now_us = tonumber(ARGV[1])
end
local min_ttl_ms = tonumber(ARGV[2])
local STRIDE = 9
local ALGOS = {}

-- ceil(x / d) for integers 0 <= x, d < 2^53, corrected for the rounding of the float division.
local function ceil_div(x, d)
  local q = math.floor(x / d)
  if q * d > x then q = q - 1 end
  if (q + 1) * d <= x then q = q + 1 end
  if q * d < x then q = q + 1 end
  return q
end

-- An expiry in whole milliseconds (already rounded up, so that a key never expires before it is
-- fresh), at least the configured minimum and at least 1, as the digits Redis expects.
local function ttl(ms)
  if ms < min_ttl_ms then ms = min_ttl_ms end
  if ms < 1 then ms = 1 end
  return string.format('%d', ms)
end

-- The numbers a permit's state is written under: '' for an unnamed limit.
local function numbers_of(base)
  return ARGV[base + 7]
end

-- A stored value split into its state and the numbers it was written under ('' when it has none:
-- an unnamed limit's; a named limit's value without them is not Sluice's).
local function split_numbers(v, i, numbers)
  if numbers == '' then return v, '' end
  local s, n = string.match(v, '^([^/]*)/(.+)$')
  if s == nil then error('SLUICECORRUPT ' .. i, 0) end
  return s, n
end

-- What a save appends to the state: '/numbers' for a named limit.
local function numbers_suffix(base)
  local n = ARGV[base + 7]
  if n == '' then return '' end
  return '/' .. n
end

-- A window of Limit.id() numbers such as 'fw:100:60000000000' as (unit, W in that unit), the form the
-- window algorithms' fields give it (unit 1000 when W is a whole number of microseconds).
local function window_numbers(n, i)
  local w = string.match(n, '^%a+:%d+:(%d+)$')
  if w == nil then error('SLUICECORRUPT ' .. i, 0) end
  if #w > 3 and string.sub(w, -3) == '000' then return 1000, tonumber(string.sub(w, 1, -4)) end
  return 1, tonumber(w)
end

-- GET that turns a key of another type into this permit's error, before anything is written.
local function get_string(key, i)
  local v = redis.pcall('GET', key)
  if type(v) == 'table' then error('SLUICEWRONGTYPE ' .. i, 0) end
  return v
end
