-- wrk script for the soak: a mixed load over SOAK_KEYS (default 1,000,000) distinct users, drawn at random.
--   55% POST /v1/check   one user                       (token bucket, nearly always allowed)
--   10% POST /v1/check   one of 10 hot keys             (GCRA, mostly 429)
--   15% POST /v1/check   three descriptors, all or nothing: [plan=free,user] + path (of 100) + ip (of 10,240)
--   12% POST /v1/peek    one user, hits 1–3             (nothing consumed)
--    8% POST /v1/reserve one user or hot key, max_wait 50 ms
-- Bodies are built per request (1M keys cannot be prepared up front); statuses are counted per thread.
local keys = tonumber(os.getenv("SOAK_KEYS") or "1000000")
local threads = {}
local H = {["Content-Type"] = "application/json"}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() * 1000 + id)
  statuses = {}
end

local function d(k, v)
  return '{"entries":[{"key":"' .. k .. '","value":"' .. v .. '"}]}'
end

local function body(descriptors, extra)
  return '{"domain":"soak"' .. (extra or "") .. ',"descriptors":[' .. descriptors .. ']}'
end

function request()
  local r = math.random(100)
  local u = "u" .. math.random(keys)
  if r <= 55 then
    return wrk.format("POST", "/v1/check", H, body(d("user", u)))
  elseif r <= 65 then
    return wrk.format("POST", "/v1/check", H, body(d("hot", "h" .. math.random(10))))
  elseif r <= 80 then
    local tier = '{"entries":[{"key":"plan","value":"free"},{"key":"user","value":"' .. u .. '"}]}'
    local ip = "10.0." .. math.random(0, 39) .. "." .. math.random(0, 255)
    return wrk.format("POST", "/v1/check", H,
      body(tier .. "," .. d("path", "/p" .. math.random(100)) .. "," .. d("ip", ip)))
  elseif r <= 92 then
    return wrk.format("POST", "/v1/peek", H, body(d("user", u), ',"hits":' .. math.random(3)))
  else
    local k = math.random(2) == 1 and d("user", u) or d("hot", "h" .. math.random(10))
    return wrk.format("POST", "/v1/reserve", H, body(k, ',"max_wait_ns":50000000'))
  end
end

function response(status, headers, b)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for s, n in pairs(t:get("statuses")) do
      total[s] = (total[s] or 0) + n
    end
  end
  local line = "statuses:"
  for s, n in pairs(total) do
    line = line .. " " .. s .. "=" .. n
  end
  io.write(line .. "\n")
  io.write(string.format("latency p50=%.1fms p99=%.1fms max=%.1fms; requests=%d errors(connect/read/write/timeout)=%d/%d/%d/%d\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000, summary.requests,
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout))
end
