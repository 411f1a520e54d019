--[[
Sliding log (see dev.sluice.algorithm.SlidingLog): every admission logged as (time, cost); a call is
allowed iff the costs logged in (t - W, t] plus q are at most C.

State: a sorted set, score = the admission's epoch microseconds, member "time_us:cost" (one member
per instant: a second admission in the same microsecond adds to its cost). An entry logged at tau
leaves the window when t - tau >= W, i.e. now_us - tau_us >= ceil(W / 1000 ns) = Wc microseconds.
A denied call writes nothing; an allowed one also drops the entries that have left the window.
PEXPIRE: W, rounded up to the millisecond (the newest entry is now).

Fields (after the code 'l'):  cost, C, Wc (ceil(W/1000) microseconds), W in ms rounded up, unused
State reported:               sum of the live costs, time_us of the entry whose leaving admits the call
                              (-1 when allowed or never), time_us of the newest entry (-1 when none)
]]
ALGOS['l'] = {
  load = function(key, i)
    local wc = 0
    -- the same key always comes with the same limit, so Wc of any permit naming it will do
    for j = 1, #KEYS do
      if KEYS[j] == key then
        wc = tonumber(ARGV[2 + (j - 1) * STRIDE + 4])
        break
      end
    end
    local r = redis.pcall('ZRANGEBYSCORE', key, '(' .. fmt(now_us - wc), '+inf', 'WITHSCORES')
    if type(r) == 'table' and r.err then fail('WRONGTYPE', i) end
    local times, costs = {}, {}
    for j = 1, #r, 2 do
      local t, c = string.match(r[j], '^(%d+):(%d+)$')
      if t == nil then fail('CORRUPT', i) end
      times[#times + 1] = tonumber(t)
      costs[#costs + 1] = tonumber(c)
    end
    return { times = times, costs = costs }
  end,
  try = function(st, base)
    local q = tonumber(ARGV[base + 2])
    local c = tonumber(ARGV[base + 3])
    local times, costs = st.times, st.costs
    local n = #times
    local sum = 0
    for j = 1, n do sum = sum + costs[j] end
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
      return true, sum, -1, last, { times = nt, costs = nc }
    end
    local freed, retry = 0, -1
    for j = 1, n do
      freed = freed + costs[j]
      if sum - freed + q <= c then
        retry = times[j]
        break
      end
    end
    return false, sum, retry, last, nil
  end,
  save = function(key, st, base)
    local wc = tonumber(ARGV[base + 4])
    local n = #st.times
    redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now_us - wc))
    redis.call('ZREMRANGEBYSCORE', key, fmt(now_us), fmt(now_us))
    redis.call('ZADD', key, fmt(now_us), fmt(now_us) .. ':' .. fmt(st.costs[n]))
    redis.call('PEXPIRE', key, ttl(tonumber(ARGV[base + 5])))
  end,
}
