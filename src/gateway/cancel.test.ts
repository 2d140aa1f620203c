import { describe, expect, it } from 'vitest';
import { ClientGone } from './cancel.js';

describe('ClientGone', () => {
  it('fires each listener once with the reason, forgets removed ones, ignores a second abort', () => {
    const gone = new ClientGone();
    const calls: string[] = [];
    const a = () => calls.push('a');
    const b = () => calls.push('b');
    gone.addEventListener('abort', a);
    gone.addEventListener('abort', b);
    gone.removeEventListener('abort', b);
    expect(gone.aborted).toBe(false);
    const reason = new Error('client disconnected');
    gone.abort(reason);
    gone.abort(new Error('again'));
    expect(calls).toEqual(['a']);
    expect(gone.aborted).toBe(true);
    expect(gone.reason).toBe(reason);
    gone.addEventListener('abort', a); // after the fact: never called
    expect(calls).toEqual(['a']);
  });
});
