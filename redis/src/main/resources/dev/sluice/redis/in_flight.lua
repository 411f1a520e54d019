--[[
Sluice: work in flight (dev.sluice.InFlightLimiter), one key's slots, the step of
dev.sluice.algorithm.InFlightSlots, after common.lua (the time, ttl, ceil_div). The slots are a sorted set: member = holder id, score = the
instant its lease ends, in epoch microseconds (below 2^53: exact as a double score). At now:
  1. holders whose lease ended (score <= now) are removed;
  2. acquire: a holder already in the set gets score now + lease and is allowed (nothing more is
     taken); else, when fewer than max are held, it is added with now + lease and allowed; else
     denied and nothing changes;
     release: removes the holder, 1 iff it was there; renew: 1 iff it was there, its score now + lease.
  3. the key expires when its latest lease does (PEXPIRE, rounded up to the millisecond, at least the
     least expiry), and is deleted when no slot is left.

The body is the function i_op(key, base): its own script calls it with KEYS[1] and base 2, batch.lua
with the entry's key and the base of its arguments (ARGV[n] below is ARGV[base - 2 + n] there).
KEYS[1]   the key's slots (RedisKeys.inFlight: its own prefix, in the user key's hash slot)
ARGV[1]   now in epoch microseconds, or '' to read the server clock with TIME (as common.lua)
ARGV[2]   the least expiry in milliseconds (as common.lua)
ARGV[3]   'a' acquire, 'r' release, 'n' renew
ARGV[4]   the holder id
ARGV[5]   the lease in microseconds (acquire, renew)
ARGV[6]   the most slots held at once (acquire)

Reply: acquire { now_us, allowed (1/0), held after, earliest lease end, latest lease end } (the ends
0 when none is held); release and renew { now_us, 1/0 }. The caller builds the Decision.
]]
local function i_op(key, base)
  local op = ARGV[base + 1]
  local holder = ARGV[base + 2]

  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now_us))

  local result = 0
  if op == 'a' then
    local ends = now_us + tonumber(ARGV[base + 3])
    if redis.call('ZSCORE', key, holder) or redis.call('ZCARD', key) < tonumber(ARGV[base + 4]) then
      redis.call('ZADD', key, string.format('%d', ends), holder)
      result = 1
    end
  elseif op == 'r' then
    result = redis.call('ZREM', key, holder)
  elseif op == 'n' then
    if redis.call('ZSCORE', key, holder) then
      redis.call('ZADD', key, string.format('%d', now_us + tonumber(ARGV[base + 3])), holder)
      result = 1
    end
  else
    error('SLUICECORRUPT unknown in-flight operation ' .. tostring(op), 0)
  end

  local held = redis.call('ZCARD', key)
  local earliest, latest = 0, 0
  if held == 0 then
    redis.call('DEL', key)
  else
    earliest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
    latest = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
    redis.call('PEXPIRE', key, ttl(ceil_div(latest - now_us, 1000)))
  end
  if op == 'a' then
    return { now_us, result, held, earliest, latest }
  end
  return { now_us, result }
end
