/** The card rail of one process when CARD_PROVIDER=adyen: the connection settings and one pooled client. */
import type { AdyenConnection } from './adyen-config.ts';
import { type AdyenClient, createAdyenClient } from './client.ts';

export interface AdyenRail {
  connection: AdyenConnection;
  client: AdyenClient;
}

export function openAdyenRail(connection: AdyenConnection): AdyenRail {
  return { connection, client: createAdyenClient(connection) };
}
