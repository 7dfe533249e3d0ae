import type { Db } from '../db/db.ts';
import { secretMatches } from '../domain/secrets.ts';
import { type ActiveKey, findActiveKey, KEY_REVOKED_CHANNEL } from './sellers-repo.ts';

const cache_max_entries = 10_000;

/**
 * Resolves API key pairs to sellers. A hit costs no database read; a miss costs one indexed read.
 * Revocation reaches every process through LISTEN/NOTIFY; while that channel is down the cache is
 * off, so a revoked key can never outlive its revocation by more than the notification's delivery.
 */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, ActiveKey>();
  // Bumped on every invalidation, so a read that raced with a revocation is not cached afterwards.
  private generation = 0;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(private readonly db: Db) {}

  async start(): Promise<void> {
    // A revocation committed while the channel was down was missed: forget everything, and let
    // no lookup that straddled the gap (lost or restored) into the cache.
    const reset = () => {
      this.generation++;
      this.cache.clear();
    };
    this.unlisten = await this.db.listen(KEY_REVOKED_CHANNEL, { onPayload: (publicKey) => this.forget(publicKey), onLost: reset, onRestored: reset });
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = null;
  }

  /** The seller id for a valid, unrevoked pair; null otherwise. */
  async authenticate(publicKey: string, privateKey: string): Promise<number | null> {
    const key = await this.lookup(publicKey);
    return key && secretMatches(privateKey, key.digest) ? key.sellerId : null;
  }

  forget(publicKey: string): void {
    this.generation++;
    this.cache.delete(publicKey);
  }

  private async lookup(publicKey: string): Promise<ActiveKey | null> {
    const cached = this.cache.get(publicKey);
    if (cached) return cached;
    const generation = this.generation;
    const key = await findActiveKey(this.db, publicKey);
    if (key && this.unlisten && this.db.listening && generation === this.generation) this.remember(publicKey, key);
    return key;
  }

  private remember(publicKey: string, key: ActiveKey): void {
    if (this.cache.size >= cache_max_entries) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(publicKey, key);
  }
}
