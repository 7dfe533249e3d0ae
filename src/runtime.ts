import { createHmac } from 'node:crypto';
import { openAdyenRail } from './adyen/adyen-rail.ts';
import { adyenCardProcessor, adyenRefunds } from './adyen/card-processor.ts';
import type { Config } from './config.ts';
import { type AppContext, type Clock, systemClock } from './context.ts';
import { migrate } from './db/migrate.ts';
import { openDb } from './db/open.ts';
import { apiPixCharges, apiPixRefunds } from './pix/pix-charges.ts';
import { openPixRail, type PixRail } from './pix/pix-rail.ts';
import { sandboxProviders } from './providers/sandbox.ts';
import { ApiKeyAuthenticator } from './sellers/authenticator.ts';

/** Opens the database, applies migrations and wires the shared services of one process. */
export async function createContext(config: Config, clock: Clock = systemClock): Promise<AppContext> {
  const db = await openDb(config.databaseUrl, config.dataDir);
  let pix: PixRail | null = null;
  try {
    await migrate(db);
    pix = await openPixRail(config, db, clock);
    const authenticator = new ApiKeyAuthenticator(db);
    await authenticator.start();
    const sandbox = sandboxProviders(config);
    const adyen = config.cardRail.adyen ? openAdyenRail(config.cardRail.adyen) : null;
    const pixRefunds = apiPixRefunds(pix, sandbox.refunds, config.pixRail.provider === 'sandbox');
    // Derived, so no extra secret to manage; rotating POSTBACK_SECRET re-keys future fingerprints.
    const derive = (purpose: string) => createHmac('sha256', config.postbackSecret).update(purpose).digest('hex');
    return {
      config,
      db,
      clock,
      authenticator,
      providers: {
        ...sandbox,
        pix: apiPixCharges(pix, config),
        card: adyen ? adyenCardProcessor(adyen.client, adyen.connection) : sandbox.card,
        refunds: adyen ? adyenRefunds(adyen.client, adyen.connection, pixRefunds) : pixRefunds,
      },
      pix,
      adyen,
      cardFingerprintKey: derive('card-fingerprint-v1'),
      requestFingerprintKey: derive('request-fingerprint-v1'),
    };
  } catch (error) {
    await pix?.close();
    await db.close();
    throw error;
  }
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.authenticator.stop();
  await ctx.pix.close();
  await ctx.adyen?.client.close();
  await ctx.db.close();
}
