--[[
Sluice: the driver for tryAcquireEstimate, appended after every algorithm file (one script for all
algorithms). A cost known only afterwards is taken on an estimate: the decision is run.lua's for one
permit (same verdict, same write); when allowed, a pending record is left for settle.lua. A record of
the same reservation still pending is refused before anything is decided: nothing is taken.

The body is the function e_op(key, record_key, base): its own script calls it with KEYS[1], KEYS[2]
and base 2; batch.lua with the entry's keys and the base of the entry's arguments (see batch.lua).
KEYS[1]     the state of the permit (see common.lua)
KEYS[2]     the pending record of (key, limit, reservation id) (RedisKeys.pending: its hash tag is the
            state's, so both keys are in one Redis Cluster slot)
ARGV[1..11] as for run.lua with one permit, whose cost is the estimate (ARGV[base + 1 .. base + 9])
ARGV[12]    the estimate in permits (decimal: a token bucket's may be beyond a Lua double)
ARGV[13]    settleWithin in microseconds, rounded up: the record has expired once now_us >= reserved_us
            + this (store clock, exactly; the PX below only cleans it up)

Record:     "estimate:reserved_us:expires_us:ep_us:ep_frac:numbers", kept with PX = settleWithin rounded
            up to the millisecond (at least the least expiry: see common.lua). ep is estimate * P for gcra
            as the pair gcra.lua adds (0:0 for the windows); numbers are the named limit's ('' unnamed),
            under which ep was computed.
Reply:      as run.lua's for one permit; { now_us, -5 } when the reservation is already pending;
            { now_us, -3, 1, value } as run.lua's (gcra under other numbers: nothing written).
Errors:     'SLUICEWRONGTYPE 2' / 'SLUICECORRUPT 2' when the record's key holds something else.
]]
local function e_op(key, record_key, base)
  local record = redis.pcall('GET', record_key)
  if type(record) == 'table' then error('SLUICEWRONGTYPE 2', 0) end
  if record then
    local expires = string.match(record, '^%d+:%d+:(%d+):')
    if expires == nil then error('SLUICECORRUPT 2', 0) end
    if now_us < tonumber(expires) then return { now_us, -5 } end
  end
  local code = ARGV[base + 1]
  local algo = ALGOS[code]
  local s1, s2, s3, changed = algo[1](key, 1, base)
  if s1 == nil then return { now_us, -3, 1, s2 } end
  local ok, r1, r2, r3, a1, a2, a3 = algo[2](s1, s2, s3, base)
  if ok or changed then algo[3](key, a1, a2, a3, base) end
  if not ok then return { now_us, 0, 0, r1, r2, r3 } end
  local within = tonumber(ARGV[base + 11])
  local ep = '0:0'
  if code == 'g' then ep = ARGV[base + 2] .. ':' .. ARGV[base + 3] end
  local value = ARGV[base + 10] .. string.format(':%d:%d:', now_us, now_us + within) .. ep .. ':'
    .. ARGV[base + 7]
  redis.call('SET', record_key, value, 'PX', ttl(ceil_div(within, 1000)))
  return { now_us, 1, 1, r1, r2, r3 }
end
