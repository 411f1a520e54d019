// rate-limiter-flexible's RateLimiterRedis (ioredis, one connection) under the load of
// dev.sluice.bench.redis.RedisLoadBenchmark: a closed loop of IN_FLIGHT chains, each sending its next
// request when the previous one answers; 100,000 keys at 100/s each, one hot key at 1000/s, one hot key
// where every call is admitted. Usage: node rate-limiter-flexible.mjs [port] [seconds] [inFlight]
import Redis from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';

const port = Number(process.argv[2] ?? 6379);
const seconds = Number(process.argv[3] ?? 10);
const inFlight = Number(process.argv[4] ?? 50);
const warmupMs = Math.max(1, Math.floor(seconds / 5)) * 1000;
const redis = new Redis({ host: '127.0.0.1', port, enableOfflineQueue: true });
const run = Date.now().toString(36);

async function drive(name, limiter, keyOf) {
  let allowed = 0, denied = 0, errors = 0, counting = false, stop = false;
  const chain = async () => {
    while (!stop) {
      try {
        await limiter.consume(keyOf(), 1);
        if (counting) allowed++;
      } catch (e) {
        if (counting) { if (e instanceof Error) errors++; else denied++; }
      }
    }
  };
  const chains = Array.from({ length: inFlight }, chain);
  await new Promise(r => setTimeout(r, warmupMs));
  counting = true;
  const t0 = process.hrtime.bigint();
  await new Promise(r => setTimeout(r, seconds * 1000));
  counting = false;
  const t1 = process.hrtime.bigint();
  stop = true;
  await Promise.all(chains);
  const n = allowed + denied;
  const perSecond = n / (Number(t1 - t0) / 1e9);
  console.log(`${name.padEnd(46)} ${perSecond.toFixed(0).padStart(12)} ${(100 * allowed / Math.max(1, n)).toFixed(1).padStart(8)}% ${String(errors).padStart(9)}`);
}

console.log(`rate-limiter-flexible RateLimiterRedis, redis 127.0.0.1:${port}, ${inFlight} in flight, ${seconds} s per run`);
await drive('rlflexible 100,000 keys, 100/s each',
  new RateLimiterRedis({ storeClient: redis, keyPrefix: `b${run}w`, points: 100, duration: 1 }),
  () => `k${Math.floor(Math.random() * 100000)}`);
await drive('rlflexible hot key, 1000/s',
  new RateLimiterRedis({ storeClient: redis, keyPrefix: `b${run}h`, points: 1000, duration: 1 }), () => 'hot');
await drive('rlflexible hot key, every call admitted',
  new RateLimiterRedis({ storeClient: redis, keyPrefix: `b${run}o`, points: 1e9, duration: 1 }), () => 'open');
redis.disconnect();
