/**
 * A database outage is logged by the registry poller once with its stack, then at most once a
 * minute without one, and its end once at info: before, each instance logged `registry poll
 * failed` with a full pg-pool stack every second for as long as PostgreSQL was down. Its end
 * is also when the request-log writer retries (`onDatabaseBack`).
 */
import { describe, expect, it } from 'vitest';
import { ModelRegistry } from '../../src/gateway/registry/model-registry.js';
import { RegistryState } from '../../src/gateway/registry/registry-state.js';
import type { ChannelsRepo } from '../../src/store/channels-repo.js';
import type { ModelsRepo } from '../../src/store/models-repo.js';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('registry poll failures', () => {
  it('log the first failure of an outage with its stack, then a line a minute, then the recovery', async () => {
    let down = false;
    let reads = 0;
    const channels = {
      version: async () => {
        reads++;
        if (down)
          throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        return 'v1';
      },
      all: async () => [],
      discovered: async () => new Map<number, string>(),
      setVersion: async () => {},
    } as unknown as ChannelsRepo;
    const models = { all: async () => [] } as unknown as ModelsRepo;
    const lines: Array<{ level: string; obj: any; msg: string }> = [];
    const log = {
      warn: (obj: any, msg: string) => lines.push({ level: 'warn', obj, msg }),
      info: (obj: any, msg: string) => lines.push({ level: 'info', obj, msg }),
    } as any;
    let now = 1_000_000;
    const state = new RegistryState({ channels, models }, new ModelRegistry([], []), log, () => now);
    await state.reload();
    let backs = 0;
    state.onDatabaseBack = () => void backs++;
    state.startPolling(2);
    const polls = async (n: number) => {
      const start = reads;
      while (reads < start + n) await tick(2);
    };
    try {
      await polls(3);
      expect(lines).toEqual([]);

      down = true;
      await polls(10); // the same second, many failed polls
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 'warn', msg: 'registry poll failed' });
      expect(lines[0]!.obj.err).toBeInstanceOf(Error);

      now += 30_000;
      await polls(5);
      expect(lines).toHaveLength(1);

      now += 31_000; // a minute after the first line
      await polls(5);
      expect(lines).toHaveLength(2);
      expect(lines[1]!.level).toBe('warn');
      expect(lines[1]!.msg).toBe('registry poll still failing');
      expect(lines[1]!.obj.err).toBeUndefined();
      expect(lines[1]!.obj.error).toBe('connect ECONNREFUSED 127.0.0.1:5432');
      expect(JSON.stringify(lines[1]!.obj)).not.toContain('\n    at ');

      now += 5_000;
      down = false;
      await polls(5);
      expect(lines).toHaveLength(3);
      expect(lines[2]).toMatchObject({ level: 'info', msg: 'registry poll works again' });
      expect(lines[2]!.obj.down_s).toBe(66);
      // The request-log writer is told once, at the end of the outage, not at every poll.
      await polls(3);
      expect(backs).toBe(1);

      // A new outage is logged with its stack again.
      down = true;
      await polls(5);
      expect(lines).toHaveLength(4);
      expect(lines[3]).toMatchObject({ level: 'warn', msg: 'registry poll failed' });
      expect(lines[3]!.obj.err).toBeInstanceOf(Error);
    } finally {
      down = false;
      await state.close();
    }
  });
});
