/**
 * A store's stable id: created once (a random UUID in `<root>/store_id`)
 * and kept, so two machines' `default` captures never collide in a team
 * database.
 *
 * @module
 */
import { join } from "node:path";

/**
 * The store's id, created on first use.
 *
 * @param root Store root (writable the first time).
 * @returns `store_<uuid>`.
 */
export function storeId(root: string): string {
  const path = join(root, "store_id");
  try {
    const id = Deno.readTextFileSync(path).trim();
    if (/^store_[0-9a-f-]{36}$/.test(id)) return id;
  } catch { /* first use */ }
  const id = `store_${crypto.randomUUID()}`;
  Deno.writeTextFileSync(path, id + "\n", { mode: 0o600, createNew: true });
  return id;
}
