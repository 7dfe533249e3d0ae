import type { Config } from './config.ts';
import type { Db } from './db/db.ts';
import type { Providers } from './providers/ports.ts';
import type { SandboxLevers } from './providers/sandbox/ports.ts';

export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

/** Resolves a seller's key pair to the seller (sellers/authenticator.ts, with its cache). */
export interface KeyAuthenticator {
  /** The seller's id, or null when the pair is not a live one. */
  authenticate(publicKey: string, privateKey: string): Promise<number | null>;
  /** Drops a revoked key from this process's cache at once. */
  forget(publicKey: string): void;
  stop(): Promise<void>;
}

/** Everything a route or worker needs, built once per process (or per test): the rails through their ports only. */
export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  authenticator: KeyAuthenticator;
  providers: Providers;
  /** The sandbox's levers (the /sandbox routes), each while the rail it plays is sandbox. */
  sandbox: SandboxLevers;
  /** This database's installation id (CONTRACT §11.2), part of every key sent to a provider. */
  installationId: string;
  /** Keys the card fingerprint (HMAC), so equal cards match without the number being kept. */
  cardFingerprintKey: string;
  /** Keys the stored fingerprint of idempotent request bodies, which may hold card data. */
  requestFingerprintKey: string;
}
