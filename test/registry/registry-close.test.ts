/**
 * The registry stops touching the database before the gateway closes it: a reload pushed by
 * another instance's change (Redis pub/sub) or a poll under way when the gateway stops has ended
 * when `RegistryState.close()` resolves, and nothing new starts after. Before, a notification of
 * the gateway's own admin write could start a reload that ran into the closed database and logged
 * "registry reload failed" (seen in CI: discovery-shutdown.test.ts under PostgreSQL + Redis).
 */
import { describe, expect, it } from 'vitest';
import { ModelRegistry } from '../../src/gateway/registry/model-registry.js';
import { RegistryState } from '../../src/gateway/registry/registry-state.js';
import type { ChannelsRepo } from '../../src/store/channels-repo.js';
import type { ModelsRepo } from '../../src/store/models-repo.js';

/** Repos whose `version()` reads wait for the test to release them; every read is counted. */
function gatedRepos() {
  const waiting: Array<() => void> = [];
  const calls = { version: 0, all: 0 };
  let gate = false;
  const channels = {
    version: async () => {
      calls.version++;
      if (gate) await new Promise<void>((r) => waiting.push(r));
      return 'v1';
    },
    all: async () => {
      calls.all++;
      return [];
    },
    discovered: async () => new Map<number, string>(),
    setVersion: async () => {},
  } as unknown as ChannelsRepo;
  const models = { all: async () => [] } as unknown as ModelsRepo;
  return {
    repos: { channels, models },
    calls,
    hold: () => {
      gate = true;
    },
    release: () => {
      gate = false;
      for (const r of waiting.splice(0)) r();
    },
    waiting: () => waiting.length,
  };
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await tick(5);
  expect(cond()).toBe(true);
}

/** `close()` stays pending while the read under way is held, and resolves once it is released. */
async function closesOnlyOnRelease(state: RegistryState, g: ReturnType<typeof gatedRepos>): Promise<void> {
  let closed = false;
  const closing = state.close().then(() => {
    closed = true;
  });
  await tick(20);
  expect(closed).toBe(false);
  g.release();
  await closing;
  expect(closed).toBe(true);
}

describe('RegistryState.close', () => {
  it('waits for a pushed reload under way, and ignores pushes after it', async () => {
    const g = gatedRepos();
    const state = new RegistryState(g.repos, new ModelRegistry([], []));
    await state.reload();
    g.hold();
    state.invalidate();
    await until(() => g.waiting() === 1);

    await closesOnlyOnRelease(state, g);

    const before = { ...g.calls };
    state.invalidate();
    await tick(20);
    expect(g.calls).toEqual(before);
  });

  it('waits for a poll under way, starts no poll after, and never stacks polls', async () => {
    const g = gatedRepos();
    const state = new RegistryState(g.repos, new ModelRegistry([], []));
    await state.reload();
    g.hold();
    state.startPolling(2);
    await until(() => g.waiting() === 1);
    // Many ticks pass while the first poll hangs: none starts a second read.
    await tick(30);
    expect(g.waiting()).toBe(1);

    await closesOnlyOnRelease(state, g);

    const before = { ...g.calls };
    state.startPolling(2);
    await tick(30);
    expect(g.calls).toEqual(before);
  });
});
