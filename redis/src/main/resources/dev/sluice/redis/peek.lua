--[[
Sluice: the read-only driver for peek, appended after every algorithm file (one script for all
algorithms). It only reads: no SET, no ZADD, no PEXPIRE, and a key never seen stays absent. It reports
the state of KEYS[1] as it is, with the instant it read it, and the Java side decides with the pure
step (dev.sluice.algorithm.Algorithms.peek) on exactly that state at exactly that instant.

KEYS[1]     the state of the one permit
ARGV        as for the other scripts (see common.lua): ARGV[1] now or '', ARGV[2] unused here, then
            the nine fields of the permit (the code, the numbers, and what the algorithm load reads)

Reply:      { now_us, s1, s2, s3 }  the state as the algorithm's load reads it (see each algorithm
                                    file: gcra b_us, b_frac, 0; windows k (-1 when fresh), counts)
            { now_us, t1, c1, t2, c2, ... }  for the sliding log: its live entries (time_us, cost),
                                    oldest first; at most C of them (each costs at least 1)
            { now_us, -3, value }  a gcra value written under other numbers (the caller converts it)
            A state written under other numbers is reported as read under the caller's (see common.lua).
Errors:     'SLUICEWRONGTYPE 1', 'SLUICECORRUPT 1' as for the other scripts.
]]
local code = ARGV[3]
if code == 'l' then
  local times, costs = ALGOS['l'][1](KEYS[1], 1, 2)
  local out = { now_us }
  for j = 1, #times do
    out[#out + 1] = times[j]
    out[#out + 1] = costs[j]
  end
  return out
end
local s1, s2, s3 = ALGOS[code][1](KEYS[1], 1, 2)
if s1 == nil then return { now_us, -3, s2 } end
return { now_us, s1, s2, s3 }
