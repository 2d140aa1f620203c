import { startTcpFaultProxy, type TcpFaultProxy } from './tcp-fault-proxy.js';

/**
 * A TCP proxy between a gateway and Redis that fails the way networks do (see
 * tcp-fault-proxy.ts for `down`, `up`, `severUpstream`, `freeze`, `blackhole` and
 * `connections`). Its sockets stay half-open, so a frozen connection ignores a FIN too.
 */
export type RedisProxy = Pick<
  TcpFaultProxy,
  'url' | 'connections' | 'down' | 'up' | 'severUpstream' | 'freeze' | 'blackhole' | 'close'
>;

export function startRedisProxy(target: string): Promise<RedisProxy> {
  return startTcpFaultProxy(target, { defaultPort: 6379, halfOpen: true });
}
