--[[
Sliding log (see dev.sluice.algorithm.SlidingLog): every admission logged as (time, cost); a call is
allowed iff the costs logged in (t - W, t] plus q are at most C.

State: a sorted set, score = the admission's epoch microseconds, member "time_us:cost" (one member
per instant: a second admission in the same microsecond adds to its cost). An entry logged at tau
leaves the window when t - tau >= W, i.e. now_us - tau_us >= ceil(W / 1000 ns) = Wc microseconds.
A denied call writes nothing; an allowed one also drops the entries that have left the window.
Expiry (PEXPIRE): W, rounded up to the millisecond (the newest entry is now).

Fields (after the code 'l'):  cost, C, Wc (ceil(W/1000) microseconds), W in ms rounded up, unused
State reported:               sum of the live costs, time_us of the entry whose leaving admits the call
                              (-1 when allowed or never), time_us of the newest entry (-1 when none)
Working state (between permits naming the same key): the live times, their costs, their sum.
]]
local function l_load(key, i, base)
  local wc = tonumber(ARGV[base + 4])
  local r = redis.pcall('ZRANGEBYSCORE', key, string.format('(%d', now_us - wc), '+inf', 'WITHSCORES')
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
  return times, costs, sum
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
  local now = string.format('%d', now_us)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now_us - wc))
  redis.call('ZREMRANGEBYSCORE', key, now, now)
  redis.call('ZADD', key, now, string.format('%d:%d', now_us, costs[#costs]))
  redis.call('PEXPIRE', key, ttl(tonumber(ARGV[base + 5])))
end

ALGOS['l'] = { l_load, l_try, l_save }
