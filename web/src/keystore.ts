// Secrets of API keys created in this tab, kept in memory only (never in storage), so the
// playground can offer them without asking the user to paste what they just copied.
const secrets = new Map<number, { name: string; prefix: string; secret: string }>();

export function rememberKey(id: number, name: string, prefix: string, secret: string) {
  secrets.set(id, { name, prefix, secret });
}

export function rememberedKeys() {
  return [...secrets.entries()].map(([id, v]) => ({ id, ...v }));
}
