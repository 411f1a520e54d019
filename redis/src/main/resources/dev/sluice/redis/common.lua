--[[
Sluice: the part every script shares. Each script Sluice loads is this file, one or more algorithm
files (gcra.lua, fixed_window.lua, sliding_window.lua, sliding_log.lua) and run.lua, joined in that
order once at start-up: the text is constant, so it is loaded once and called with EVALSHA.

Exactness. Lua 5.1 numbers are doubles, exact for integers below 2^53. Epoch nanoseconds (~1.8e18)
do not fit, epoch microseconds (~1.8e15) do, so time is kept in microseconds and every quantity the
scripts compute exactly stays below 2^53; the Java side checks the limits that guarantee it
(RedisLimits) and finishes the nanosecond arithmetic of the Decision itself.

KEYS[i]     the state of permit i (one key per (key, limit); a key repeated means the same state)
ARGV[1]     now in epoch microseconds, or '' to read the server clock with TIME
ARGV[2]     the least PEXPIRE in milliseconds (0 with server time; with a client ticker Redis's clock
            is not the ticker's, so keys are kept at least this long)
ARGV[3..]   six fields per permit: algorithm code ('g' gcra/token bucket, 'f' fixed window,
            's' sliding window, 'l' sliding log) then five algorithm fields (see each algorithm file)

Reply: { now_us, committed (1/0), then per permit: allowed (1/0), s1, s2, s3 } where s1..s3 is the
state that permit saw (see each algorithm file); the caller computes the Decision from it.
]]
local now_us
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now_us = tonumber(ARGV[1])
end
local min_ttl_ms = tonumber(ARGV[2])
local STRIDE = 6
local ALGOS = {}

-- An integer as decimal digits: tostring would print 1.8e+15 and lose digits.
local function fmt(x)
  return string.format('%.0f', x)
end

-- floor(x / d) for integers 0 <= x, d < 2^53, corrected for the rounding of the float division.
local function floor_div(x, d)
  local q = math.floor(x / d)
  while q * d > x do q = q - 1 end
  while (q + 1) * d <= x do q = q + 1 end
  return q
end

local function ceil_div(x, d)
  local q = floor_div(x, d)
  if q * d < x then q = q + 1 end
  return q
end

-- A TTL in whole milliseconds (already rounded up, so that a key never expires before it is fresh),
-- at least the configured minimum and at least 1.
local function ttl(ms)
  if ms < min_ttl_ms then ms = min_ttl_ms end
  if ms < 1 then ms = 1 end
  return fmt(ms)
end

-- SET with PX: state and expiry in one write.
local function set_with_ttl(key, value, ms)
  redis.call('SET', key, value, 'PX', ttl(ms))
end

-- Errors name the permit (1-based); the caller turns that into the key's name.
local function fail(kind, i)
  error('SLUICE' .. kind .. ' ' .. i, 0)
end

-- GET that reports a key of another type as this permit's error instead of aborting the script.
local function get_string(key, i)
  local v = redis.pcall('GET', key)
  if type(v) == 'table' and v.err then fail('WRONGTYPE', i) end
  if v == false then return nil end
  return v
end

local B21 = 2097152 -- 2^21
-- a * b as five base-2^21 limbs, least significant first, for 0 <= a < 2^31 and 0 <= b < 2^53.
local function mul_limbs(a, b)
  local b0 = b % B21
  local t = (b - b0) / B21
  local b1 = t % B21
  local b2 = (t - b1) / B21
  local r = {}
  local carry = 0
  local parts = { b0, b1, b2 }
  for i = 1, 3 do
    local v = a * parts[i] + carry -- < 2^52 + 2^32: exact
    local lo = v % B21
    r[i] = lo
    carry = (v - lo) / B21
  end
  local lo = carry % B21
  r[4] = lo
  r[5] = (carry - lo) / B21
  return r
end

-- a * b <= c * d, exactly, for 0 <= a, c < 2^31 and 0 <= b, d < 2^53.
local function mul_le(a, b, c, d)
  local x = mul_limbs(a, b)
  local y = mul_limbs(c, d)
  for i = 5, 1, -1 do
    if x[i] ~= y[i] then return x[i] < y[i] end
  end
  return true
end

-- The window of now: k = floor(t / W) and e = t - k*W, with t = now in nanoseconds. W is given in
-- `unit` nanoseconds: unit 1000 (W a whole number of microseconds: exact for any W) or unit 1
-- (then W < 2^53 / 5, checked by the caller). e is returned in the same unit as W.
local windows = {}
local function window_of(wn, unit)
  local memo = windows[fmt(unit) .. ':' .. fmt(wn)]
  if memo then return memo[1], memo[2] end
  local k, e
  if unit == 1000 then
    k = floor_div(now_us, wn)
    e = now_us - k * wn
  else
    -- t = 1000 * now_us: divide now_us first, then bring in the factor 1000 one digit-factor at a
    -- time (2, 2, 2, 5, 5, 5) so that no intermediate exceeds 5 * W < 2^53.
    k = floor_div(now_us, wn)
    e = now_us - k * wn
    local factors = { 2, 2, 2, 5, 5, 5 }
    for i = 1, 6 do
      local f = factors[i]
      local r = e * f
      local d = floor_div(r, wn)
      k = k * f + d
      e = r - d * wn
    end
  end
  windows[fmt(unit) .. ':' .. fmt(wn)] = { k, e }
  return k, e
end

-- A duration of x units of `unit` ns in milliseconds, rounded up.
local function units_to_ms(x, unit)
  if unit == 1000 then return ceil_div(x, 1000) end
  return ceil_div(x, 1000000)
end

-- Reads "a:b" (or "a:b:c") of non-negative integers, failing on anything Sluice did not write.
local function parse(v, i, n)
  local a, b, c
  if n == 2 then
    a, b = string.match(v, '^(%d+):(%d+)$')
  else
    a, b, c = string.match(v, '^(%d+):(%d+):(%d+)$')
  end
  if a == nil or (n == 3 and c == nil) then fail('CORRUPT', i) end
  return tonumber(a), tonumber(b), tonumber(c)
end
