-- wrk script: POST /v1/check with three limited descriptors a request (user, ip, org: all or nothing, one store
-- call), 1,000 users in rotation (bodies prepared once, not per request)
local requests = {}
local i = 0
function init(args)
  for u = 1, 1000 do
    local body = '{"domain":"bench","descriptors":['
      .. '{"entries":[{"key":"user","value":"u' .. u .. '"}]},'
      .. '{"entries":[{"key":"ip","value":"10.0.' .. (u % 250) .. '.' .. (u % 7) .. '"}]},'
      .. '{"entries":[{"key":"org","value":"o' .. (u % 50) .. '"}]}]}'
    requests[u] = wrk.format("POST", "/v1/check", {["Content-Type"] = "application/json"}, body)
  end
end
function request()
  i = i % 1000 + 1
  return requests[i]
end
