--[[
Sliding log (see dev.sluice.algorithm.SlidingLog): every admission logged as (time, cost); a call is
allowed iff the costs logged in (t - W, t] plus q are at most C.

State: a sorted set, score = the admission's epoch microseconds, member "time_us:cost" (one member
per instant: a second admission in the same microsecond adds to its cost). An entry logged at tau
leaves the window when t - tau >= W, i.e. now_us - tau_us >= ceil(W / 1000 ns) = Wc microseconds.
A denied call writes nothing; an allowed one also drops the entries that have left the window.
Expiry (PEXPIRE): W, rounded up to the millisecond (the newest entry is now).
Named: the member "#numbers" of score -inf (outside every window) says what numbers the entries were
logged under. Under other numbers (Inheritance.slidingLog) the entries inside the old window carry
over with their times; one that the new window would already have dropped is moved to the new
window's first microsecond (now - Wc' + 1), so it counts now and leaves 1 us later; the log is then
written anew.

Fields (after the code 'l'):  cost, C, Wc (ceil(W/1000) microseconds), W in ms rounded up, unused
State reported:               sum of the live costs, time_us of the entry whose leaving admits the call
                              (-1 when allowed or never), time_us of the newest entry (-1 when none)
Working state (between permits naming the same key): the live times, their costs, their sum.
]]
local REWRITE = {}

-- ceil(W / 1000) microseconds of Limit.id() numbers such as 'sl:5:10000000000' (W may exceed 2^53).
local function log_window_us(n, i)
  local w = string.match(n, '^%a+:%d+:(%d%d%d%d+)$')
  if w == nil then error('SLUICECORRUPT ' .. i, 0) end
  local us = tonumber(string.sub(w, 1, -4))
  if string.sub(w, -3) ~= '000' then us = us + 1 end
  return us
end

local function l_load(key, i, base)
  local wc = tonumber(ARGV[base + 4])
  local numbers = numbers_of(base)
  local wc0 = wc
  local changed = false
  if numbers ~= '' then
    local m = redis.pcall('ZRANGEBYSCORE', key, '-inf', '-inf')
    if m.err then error('SLUICEWRONGTYPE ' .. i, 0) end
    if #m > 0 then
      local was = string.match(m[1], '^#(.+)$')
      if was == nil then error('SLUICECORRUPT ' .. i, 0) end
      if was ~= numbers then
        changed = true
        wc0 = log_window_us(was, i)
      end
    end
  end
  local r = redis.pcall('ZRANGEBYSCORE', key, string.format('(%d', now_us - wc0), '+inf', 'WITHSCORES')
  if r.err then error('SLUICEWRONGTYPE ' .. i, 0) end
  local times, costs, sum = {}, {}, 0
  for j = 1, #r, 2 do
    local t, c = string.match(r[j], '^(%d+):(%d+)$')
    if t == nil then error('SLUICECORRUPT ' .. i, 0) end
    c = tonumber(c)
    times[#times + 1] = tonumber(t)
    costs[#costs + 1] = c
    sum = sum + c
  end
  if not changed then return times, costs, sum end
  local earliest = now_us - wc + 1
  local nt, nc, m = {}, {}, 0
  for j = 1, #times do
    local t = times[j]
    if t < earliest then t = earliest end
    if m > 0 and nt[m] == t then
      nc[m] = nc[m] + costs[j]
    else
      m = m + 1
      nt[m] = t
      nc[m] = costs[j]
    end
  end
  REWRITE[key] = true
  return nt, nc, sum, true
end

local function l_try(times, costs, sum, base)
  local q = tonumber(ARGV[base + 2])
  local c = tonumber(ARGV[base + 3])
  local n = #times
  local last = -1
  if n > 0 then last = times[n] end
  if sum + q <= c then
    local nt, nc = {}, {}
    for j = 1, n do
      nt[j] = times[j]
      nc[j] = costs[j]
    end
    if last == now_us then
      nc[n] = nc[n] + q
    else
      nt[n + 1] = now_us
      nc[n + 1] = q
    end
    return true, sum, -1, last, nt, nc, sum + q
  end
  local freed, retry = 0, -1
  for j = 1, n do
    freed = freed + costs[j]
    if sum - freed + q <= c then
      retry = times[j]
      break
    end
  end
  return false, sum, retry, last, times, costs, sum
end

local function l_save(key, times, costs, sum, base)
  local wc = tonumber(ARGV[base + 4])
  local numbers = numbers_of(base)
  if REWRITE[key] then
    -- read under other numbers: the log as read (and taken from) replaces the old one
    REWRITE[key] = nil
    redis.call('DEL', key)
    for j = 1, #times do
      local t = string.format('%d', times[j])
      redis.call('ZADD', key, t, t .. string.format(':%d', costs[j]))
    end
  else
    local now = string.format('%d', now_us)
    -- '(-inf' keeps a named log's numbers, the one member of score -inf
    redis.call('ZREMRANGEBYSCORE', key, '(-inf', string.format('%d', now_us - wc))
    redis.call('ZREMRANGEBYSCORE', key, now, now)
    redis.call('ZADD', key, now, string.format('%d:%d', now_us, costs[#costs]))
  end
  if numbers ~= '' then redis.call('ZADD', key, '-inf', '#' .. numbers) end
  redis.call('PEXPIRE', key, ttl(tonumber(ARGV[base + 5])))
end

ALGOS['l'] = { l_load, l_try, l_save }
