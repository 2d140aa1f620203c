// Secrets of API keys created in this tab, kept in memory only (never in storage), so the
// playground can offer them without asking the user to paste what they just copied.
const secrets = new Map<number, { name: string; prefix: string; secret: string }>();

export function rememberKey(id: number, name: string, prefix: string, secret: string) {
  secrets.set(id, { name, prefix, secret });
}

export function rememberedKeys() {
  return [...secrets.entries()].map(([id, v]) => ({ id, ...v }));
}

/** The playground's "remember the key in this tab" (sessionStorage). */
export const PLAYGROUND_KEY = 'modelgate.playground.key';

/**
 * Forgets the secret of a key deleted in this tab, in memory and, when it is the one the
 * playground remembers (known by its prefix after a reload), in session storage: the playground
 * offered it and filled it in, and every call with it answered "invalid API key".
 */
export function forgetKey(id: number, prefix: string) {
  const held = secrets.get(id)?.secret;
  secrets.delete(id);
  const start = prefix.replace(/…$/, '');
  try {
    const remembered = sessionStorage.getItem(PLAYGROUND_KEY);
    if (remembered && (remembered === held || (start.length > 3 && remembered.startsWith(start))))
      sessionStorage.removeItem(PLAYGROUND_KEY);
  } catch {
    // storage unavailable: nothing kept there
  }
}

/**
 * Forgets every key secret this tab holds, in memory and in the playground's session storage:
 * on sign-out, so the next person to sign in in this tab is not offered (and billed to) them.
 */
export function forgetKeys() {
  secrets.clear();
  try {
    sessionStorage.removeItem(PLAYGROUND_KEY);
  } catch {
    // storage unavailable: nothing kept there
  }
}
