/**
 * A received Pix as the PSP's own API describes it, turned into facts. Its txid finds a PIX sale of
 * this installation (each begins with the installation id); a txid of anyone else's may still be a
 * boleto's Pix, whose charge the issuer made on the same account: the PSP is asked where that charge
 * lives, the one thing of it a boleto sale knows (the location in its BR Code).
 */
import type { ProviderFact } from '../../domain/provider-facts.ts';
import { type ApiPixClient, isRefusal, type Pix } from './client/api-pix-client.ts';
import { factsOfPix } from './facts.ts';

const cob_txid = /^[a-zA-Z0-9]{26,35}$/;

/** A location as a BR Code carries it: no scheme. */
const bare = (location: string) => location.replace(/^https?:\/\//i, '');

async function foreignChargeLocation(client: ApiPixClient, txid: string | null, installationId: string): Promise<string | null> {
  // Only an immediate charge (a txid of 26 to 35) has a location; a static BR Code's txid has none.
  if (txid === null || txid.startsWith(installationId) || !cob_txid.test(txid)) return null;
  try {
    const cob = await client.getCob(txid);
    const location = cob.loc?.location ?? cob.location;
    return location ? bare(location) : null;
  } catch (error) {
    // No charge of that txid the PSP will show us (none, or another system's it refuses): nothing
    // more to learn of it. Only a PSP that could not answer is asked again.
    if (isRefusal(error)) return null;
    throw error;
  }
}

/** The facts of one received Pix. Throws when the PSP could not be asked (the caller asks again later). */
export async function receivedPixFacts(client: ApiPixClient, pix: Pix, installationId: string, account: string): Promise<ProviderFact[]> {
  return factsOfPix(pix, installationId, await foreignChargeLocation(client, pix.txid ?? null, installationId), account);
}
