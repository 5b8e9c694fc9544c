// What the API tells the fronts (deploy/nginx, deploy/varnish) about keys: one key's state by its hash,
// and a front the changes are pushed to, so that a front may hold a key check for an hour (docs/deploy.md).

/** One key as the fronts are told of it, by its hash (the keys file holds no key). */
export interface KeyState {
  /** The keys file's hash, "sha256:<64 hex>". */
  hash: string;
  /** The key's answer now, or null when it is refused (revoked, suspended, grace over, gone). */
  valid: { name: string; rate: number; burst: number; until: number } | null;
}

/** A front the API pushes key changes to. */
export interface Front {
  readonly name: string;
  /** Tells the front these keys changed; rejects when it could not be told. */
  push(changes: readonly KeyState[]): Promise<void>;
  /** Brings the front in step with every key (at start, or after a push failed): `all` holds every valid key. */
  resync(all: readonly KeyState[]): Promise<void>;
}
