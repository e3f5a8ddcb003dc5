-- Load script for wrk. Usage: wrk ... -s wrk-script.lua <url> -- <spec.lua> <timedMs>
-- The spec file returns { requests = { {method, path, headers, body, unique}, ... } }; each
-- connection cycles through them, so tokens and companies rotate. A body holding the
-- `unique` marker gets a fresh customer reference per request (fixed width, so the
-- Content-Length never changes and the raw request is built by concatenation alone).
--
-- With WIA_WRK_COUNT=1 the script also counts every answer by status, and stops sending new
-- requests once <timedMs> have passed (a long delay), while the requests already in flight
-- are still answered and counted during wrk's remaining duration. So the number of 200s is
-- exact: the load generator never hangs up on an item the server is committing.
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } wia_timespec;
int clock_gettime(int clock_id, wia_timespec *tp);
]]
local timespec = ffi.new("wia_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, timespec) -- CLOCK_MONOTONIC
  return tonumber(timespec.tv_sec) * 1000 + tonumber(timespec.tv_nsec) / 1e6
end

local counting = os.getenv("WIA_WRK_COUNT") == "1"
local threads = {}
local next_tid = 0

function setup(thread)
  next_tid = next_tid + 1
  thread:set("tid", next_tid)
  table.insert(threads, thread)
end

local plain, heads, tails = {}, {}, {}
local count_requests, index, serial = 0, 0, 0
local deadline = nil
sent, received, ok200, non2xx = 0, 0, 0, 0

function init(args)
  local spec = dofile(args[1])
  local timed_ms = tonumber(args[2] or "0")
  if timed_ms > 0 then deadline = now_ms() + timed_ms end
  local marker = string.rep("#", 12)
  for i, t in ipairs(spec.requests) do
    local headers = {}
    for name, value in pairs(t.headers or {}) do headers[name] = value end
    if t.unique then
      local body = t.body:gsub(t.unique, "t" .. tid .. "-" .. marker, 1)
      local raw = wrk.format(t.method, t.path, headers, body)
      local s, e = raw:find(marker, 1, true)
      heads[i], tails[i] = raw:sub(1, s - 1), raw:sub(e + 1)
    else
      plain[i] = wrk.format(t.method, t.path, headers, t.body)
    end
  end
  count_requests = #spec.requests
  -- Threads start at different places in the rotation.
  index = (tid * 7) % count_requests
end

function request()
  index = index % count_requests + 1
  sent = sent + 1
  local raw = plain[index]
  if raw then return raw end
  serial = serial + 1
  return heads[index] .. string.format("%012d", serial) .. tails[index]
end

if counting then
  function response(status, headers, body)
    received = received + 1
    if status == 200 then
      ok200 = ok200 + 1
    elseif status < 200 or status >= 300 then
      non2xx = non2xx + 1
    end
  end

  function delay()
    if deadline and now_ms() >= deadline then return 3600000 end
    return 0
  end
end

QUANTILES = {}
for q = 1, 99 do table.insert(QUANTILES, q) end
for _, q in ipairs({ 99.25, 99.5, 99.75, 99.9, 99.95, 99.99 }) do table.insert(QUANTILES, q) end

function done(summary, latency, requests)
  local totals = { sent = 0, received = 0, ok200 = 0, non2xx = 0 }
  for _, thread in ipairs(threads) do
    for name, _ in pairs(totals) do totals[name] = totals[name] + (tonumber(thread:get(name)) or 0) end
  end
  -- wrk calls request() once on the first thread before the run, to check the request it builds;
  -- that request is never sent.
  totals.sent = totals.sent - 1
  local e = summary.errors
  -- The latency distribution as quantile points, so runs can be merged (see load.ts).
  local points = {}
  for _, q in ipairs(QUANTILES) do
    table.insert(points, string.format("[%g,%d]", q, latency:percentile(q)))
  end
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"durationUs":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latencyUs":{"max":%d,"mean":%.1f,"quantiles":[%s]},"counting":%s,"sent":%d,"received":%d,"ok200":%d,"non2xx":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.max, latency.mean, table.concat(points, ","),
    tostring(counting), totals.sent, totals.received, totals.ok200, totals.non2xx))
end
