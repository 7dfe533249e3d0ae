import type { AdyenRail } from './adyen/adyen-rail.ts';
import type { Config } from './config.ts';
import type { Db } from './db/db.ts';
import type { PixRail } from './pix/pix-rail.ts';
import type { Providers } from './providers/ports.ts';
import type { ApiKeyAuthenticator } from './sellers/authenticator.ts';

export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

/** Everything a route or worker needs, built once per process (or per test). */
export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  authenticator: ApiKeyAuthenticator;
  providers: Providers;
  /** The PIX rail: the API Pix connector and, with the sandbox, the embedded PSP. */
  pix: PixRail;
  /** The Adyen card rail (CARD_PROVIDER=adyen); null with the sandbox card processor. */
  adyen: AdyenRail | null;
  /** Keys the card fingerprint (HMAC), so equal cards match without the number being kept. */
  cardFingerprintKey: string;
  /** Keys the stored fingerprint of idempotent request bodies, which may hold card data. */
  requestFingerprintKey: string;
}
