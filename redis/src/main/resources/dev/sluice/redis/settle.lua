--[[
Sluice: the driver for settle, appended after every algorithm file (one script for all algorithms).
Settles a reservation that estimate.lua left pending: deletes its record and applies d = actual -
estimate to the key's state at now, atomically, once (a second settle finds no record). With B the
backlog at now and P the emission interval (gcra), k the window of now and kr the reservation's:

  gcra       d > 0: B' = min(B + d*P, MAX_SCALED) (debt: no capacity check); d < 0: B' = max(0, B - |d|*P)
  fixed      d > 0: count of window k += d;  d < 0: count of k -= min(|d|, count) when kr == k, else 0
  sliding    state rolled to k;  d > 0: current += d;  d < 0: current -= min(|d|, current) when kr == k,
             previous -= min(|d|, previous) when kr == k - 1, else nothing
  log        entries slid out dropped;  d > 0: d logged at now;  d < 0: the entry at reserved_us, while
             in the log, loses min(|d|, its cost) (removed at 0)

d*P is exact: the record keeps ep = estimate*P and the call sends ap = actual*P as (us, frac) pairs
(computed in Java), so d*P = ap - ep is a pair subtraction. A record whose ep was computed under other
numbers of a named limit is reported (-6) and the call is repeated with ep under the caller's numbers.

The body is the function s_op(key, record_key, base), called as estimate.lua's e_op is (ARGV[n] below
is ARGV[base - 2 + n] in a batch).
KEYS[1]     the state of the permit (see common.lua); KEYS[2] the pending record (see estimate.lua)
ARGV[1..11] as for run.lua with one permit, whose cost is the actual (gcra: ap = actual*P)
ARGV[12]    the actual in permits (decimal)
ARGV[13..14] MAX_SCALED as (us, frac) for gcra ('' otherwise)
ARGV[15..16] for a gcra record under other numbers: the estimate it holds and ep under the caller's
            numbers as 'us:frac' (both '' unless repeated after -6)

Reply:      { now_us, 0 }: no such reservation pending (never made, settled, or expired: an expired
            record is deleted); nothing changed.
            { now_us, 1, estimate, adjusted, p1, p2, p3, a1, a2, a3 }: settled; adjusted is the change in
            permits for the windows and the log (0 for gcra, whose adjustment the caller computes from
            B and B'); p is gcra's backlog before (b_us, b_frac, 0; zeros for the others), a the state
            after (gcra: B' as b_us, b_frac, 0; fixed: k, count, 0; sliding: k, previous, current; log:
            the sum of its live costs, 0, 0).
            { now_us, -3, 1, value } as run.lua's; { now_us, -6, estimate } (see above): nothing written.
]]
local function s_op(key, record_key, base)
  local record = redis.pcall('GET', record_key)
  if type(record) == 'table' then error('SLUICEWRONGTYPE 2', 0) end
  if not record then return { now_us, 0 } end
  local est, at, expires, ep_us, ep_frac, numbers = string.match(record, '^(%d+):(%d+):(%d+):(%d+):(%d+):(.*)$')
  if est == nil then error('SLUICECORRUPT 2', 0) end
  if now_us >= tonumber(expires) then
    redis.call('DEL', record_key)
    return { now_us, 0 }
  end
  at = tonumber(at)
  local code = ARGV[base + 1]
  local algo = ALGOS[code]
  local s1, s2, s3, changed = algo[1](key, 1, base)
  if s1 == nil then return { now_us, -3, 1, s2 } end
  local adjusted, a1, a2, a3 = 0, 0, 0, 0
  local write = changed

  -- the window of t_us for a window W of wn units (see window_of)
  local function window_at(t_us, wn, unit)
    local saved = now_us
    now_us = t_us
    local k = window_of(wn, unit)
    now_us = saved
    return k
  end

  if code == 'g' then
    if numbers ~= ARGV[base + 7] then
      if ARGV[base + 13] ~= est then return { now_us, -6, est } end
      ep_us, ep_frac = string.match(ARGV[base + 14], '^(%d+):(%d+)$')
    end
    local k = tonumber(ARGV[base + 6])
    local e_us, e_frac = tonumber(ep_us), tonumber(ep_frac)
    local p_us, p_frac = tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3])
    local up = p_us > e_us or (p_us == e_us and p_frac >= e_frac)
    local d_us, d_frac
    if up then d_us, d_frac = p_us - e_us, p_frac - e_frac else d_us, d_frac = e_us - p_us, e_frac - p_frac end
    if d_frac < 0 then
      d_frac = d_frac + k
      d_us = d_us - 1
    end
    if up then
      a1, a2 = s1 + d_us, s2 + d_frac
      if a2 >= k then
        a2 = a2 - k
        a1 = a1 + 1
      end
      local m_us, m_frac = tonumber(ARGV[base + 11]), tonumber(ARGV[base + 12])
      if a1 > m_us or (a1 == m_us and a2 > m_frac) then a1, a2 = m_us, m_frac end
    else
      a1, a2 = s1 - d_us, s2 - d_frac
      if a2 < 0 then
        a2 = a2 + k
        a1 = a1 - 1
      end
      if a1 < 0 then a1, a2 = 0, 0 end
    end
    write = write or a1 ~= s1 or a2 ~= s2
    if write then g_save(key, a1, a2, 0, base) end
  else
    local d = tonumber(ARGV[base + 10]) - tonumber(est)
    if code == 'l' then
      local times, costs, n = s1, s2, #s1
      local sum = s3
      if d > 0 then
        if n > 0 and times[n] == now_us then
          costs[n] = costs[n] + d
        else
          times[n + 1] = now_us
          costs[n + 1] = d
        end
        sum = sum + d
        adjusted = d
        l_save(key, times, costs, sum, base)
      else
        local j = 0
        if d < 0 then
          for i = 1, n do
            if times[i] == at then j = i end
          end
        end
        if j > 0 then
          local g = math.min(-d, costs[j])
          local left = costs[j] - g
          sum = sum - g
          adjusted = -g
          if changed then
            table.remove(times, j)
            table.remove(costs, j)
            if left > 0 then
              table.insert(times, j, at)
              table.insert(costs, j, left)
            end
          else
            local t = string.format('%d', at)
            redis.call('ZREMRANGEBYSCORE', key, t, t)
            if left > 0 then redis.call('ZADD', key, t, t .. string.format(':%d', left)) end
          end
        end
        if changed then l_save(key, times, costs, sum, base) end
      end
      a1 = sum
    else
      local unit, wn = tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5])
      local k, e = window_of(wn, unit)
      if code == 'f' then
        local count = 0
        if s1 == k then count = s2 end
        if d > 0 then
          count = count + d
          adjusted = d
        elseif d < 0 and s1 == k and window_at(at, wn, unit) == k then
          adjusted = -math.min(-d, count)
          count = count + adjusted
        end
        write = write or adjusted ~= 0
        if write then f_save(key, k, count, e, base) end
        a1, a2 = k, count
      else
        local prev, curr = counts_at(s1, s2, s3, k)
        if d > 0 then
          curr = curr + d
          adjusted = d
        elseif d < 0 then
          local kr = window_at(at, wn, unit)
          if kr == k then
            adjusted = -math.min(-d, curr)
            curr = curr + adjusted
          elseif kr == k - 1 then
            adjusted = -math.min(-d, prev)
            prev = prev + adjusted
          end
        end
        write = write or adjusted ~= 0
        if write then s_save(key, k, prev, curr, base) end
        a1, a2, a3 = k, prev, curr
      end
    end
    s1, s2, s3 = 0, 0, 0
  end
  redis.call('DEL', record_key)
  return { now_us, 1, est, adjusted, s1, s2, s3, a1, a2, a3 }
end
