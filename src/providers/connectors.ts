/**
 * The one place that knows every connector: each rail's settings read from the environment (each
 * connector's own loader), each rail's account opened with its connector, and what the rest of the
 * gateway gets of them: the registry of ports, their inbound endpoints and their jobs.
 */

import type { Config, LoadedConfig } from '../config.ts';
import type { Env } from '../config-values.ts';
import type { Db } from '../db/db.ts';
import { retryWhileUnavailable } from '../db/retry-unavailable.ts';
import { maybeOne, run, sql } from '../db/sql.ts';
import { splitHistory } from '../ledger/account-split.ts';
import type { Job } from '../workers/job.ts';
import { accountOf, recordAccounts, type StrandedWork, sandboxAccount, strandedWork } from './accounts.ts';
import { type CardRailConfig, loadCardRailConfig } from './adyen/config.ts';
import { type AdyenConnector, adyenConnector } from './adyen/connector.ts';
import { createAdyenFollowupJob } from './adyen/followup-job.ts';
import { adyenNotifications } from './adyen/notifications.ts';
import { adyenRecord } from './adyen/record.ts';
import { createAdyenReportJob } from './adyen/report-job.ts';
import { adyenReportInbox } from './adyen/report-queue.ts';
import { pixCallback } from './api-pix/callback.ts';
import { createPixTransport } from './api-pix/client/api-pix-client.ts';
import { type ApiPixConfig, loadApiPixConfig } from './api-pix/config.ts';
import { type ApiPixConnector, apiPixConnector } from './api-pix/connector.ts';
import { createPixReconcileJob } from './api-pix/reconcile-job.ts';
import { type EfiBoletoConnector, efiBoletoConnector } from './efi/boleto-connector.ts';
import { createBoletoJob } from './efi/boleto-job.ts';
import { chargeNotifications } from './efi/charge-notifications.ts';
import { createEfiChargesClient } from './efi/charges-client.ts';
import { type BoletoRailConfig, loadBoletoRailConfig, loadPayoutRailConfig, type PayoutRailConfig } from './efi/config.ts';
import { type EfiPayoutConnector, efiPayoutConnector } from './efi/connector.ts';
import { efiInfractionSource } from './efi/infraction-source.ts';
import { createEfiInfractionsClient } from './efi/infractions-client.ts';
import { createPayoutJob } from './efi/payout-job.ts';
import { createEfiPixSendClient } from './efi/pix-send-client.ts';
import { boletoRecord, efiBalance, sentPixRecord } from './efi/records.ts';
import { sentPixCallback } from './efi/sent-callback.ts';
import { createFollowupJob, heldFactsJob } from './events/jobs.ts';
import { createInfractionPollJob, type PollingPort } from './med/infraction-poll.ts';
import type { CardProcessor, InboundEndpoint, Providers } from './ports.ts';
import { createRegistry } from './registry.ts';
import { cardAutopilotJob, payoutAutopilotJob } from './sandbox/autopilot.ts';
import { openEmbeddedPsp, type SandboxPsp } from './sandbox/embedded-psp.ts';
import { type SandboxLevers, sandboxBoletoIssuer, sandboxLevers, sandboxPixPsp } from './sandbox/ports.ts';
import { sandboxCardProcessor } from './sandbox/processors.ts';

/** What the environment says of each rail (CONTRACT §11). */
export interface RailSettings {
  pixRail: ApiPixConfig;
  cardRail: CardRailConfig;
  payoutRail: PayoutRailConfig;
  boletoRail: BoletoRailConfig;
}

export function loadRailSettings(env: Env, core: Pick<LoadedConfig, 'postbackSecret' | 'pixReceiverKey'>): RailSettings {
  return {
    pixRail: loadApiPixConfig(env, core.postbackSecret),
    cardRail: loadCardRailConfig(env),
    payoutRail: loadPayoutRailConfig(env, core.pixReceiverKey),
    boletoRail: loadBoletoRailConfig(env, core.postbackSecret),
  };
}

/** The connectors of one process, with the handles tests and start-up reach for. */
export interface Rails {
  providers: Providers;
  jobs: Job[];
  apiPix: ApiPixConnector;
  /** The embedded PSP (a rail is sandbox), its state in the database; null when every rail is real. */
  psp: SandboxPsp | null;
  adyen: AdyenConnector | null;
  efi: EfiPayoutConnector;
  efiBoleto: EfiBoletoConnector;
  /** The sandbox's levers (a payer's bank), each while the rail it plays is sandbox. */
  sandbox: SandboxLevers;
  /** Unfinished work of accounts this process does not have, as found at start. */
  stranded: StrandedWork[];
}

interface Deps {
  config: Config;
  db: Db;
  clock: { now(): Date };
  installationId: string;
}

/** The embedded PSP, when PIX, payouts or boletos are the sandbox's (it keeps the sandbox card processor's settlement reports too). */
async function openSandboxPsp(settings: RailSettings, { config, db, clock }: Deps): Promise<SandboxPsp | null> {
  const rails = [settings.pixRail, settings.payoutRail, settings.boletoRail];
  if (rails.every((r) => r.provider !== 'sandbox')) return null;
  return openEmbeddedPsp({
    db,
    clock,
    receiverKey: config.pixReceiverKey,
    merchantName: config.pixMerchantName,
    merchantCity: config.pixMerchantCity,
    port: settings.pixRail.sandboxPspPort,
    boletoBankCode: config.boletoBankCode,
  });
}

/** Adyen, when it is the card rail; its record is its settlement reports, downloaded as Adyen announces them (CONTRACT §15). */
function openAdyen(settings: RailSettings, { db, installationId }: Deps): AdyenConnector | null {
  const connection = settings.cardRail.adyen;
  if (!connection) return null;
  const adyen = adyenConnector(connection, installationId, accountOf('adyen', connection.checkoutUrl, connection.merchantAccount));
  adyen.record = adyenRecord(db, adyen.account.id);
  return adyen;
}

/** The boleto issuer: Efí's Cobranças API, or the embedded PSP's through the same connector. */
function openBoletos(boleto: BoletoRailConfig, psp: SandboxPsp | null, { installationId, clock }: Deps, listening: () => string | null) {
  const notificationUrl = () => {
    const base = boleto.webhookBaseUrl ?? listening();
    return base === null ? null : `${base}/providers/efi/charges/${boleto.webhookSecret}`;
  };
  const baseUrl = boleto.efi?.baseUrl ?? psp!.efiUrl;
  const transport = createPixTransport({
    baseUrl,
    tokenUrl: boleto.efi?.tokenUrl ?? `${psp!.efiUrl}/v1/authorize`,
    clientId: boleto.efi?.clientId ?? psp!.clientId,
    clientSecret: boleto.efi?.clientSecret ?? psp!.clientSecret,
    ca: boleto.efi?.ca,
    grantBody: 'json',
  });
  const account = boleto.efi ? accountOf('efi', boleto.efi.baseUrl, boleto.efi.clientId) : sandboxAccount('efi');
  const charges = createEfiChargesClient(baseUrl, transport);
  const efiBoleto = efiBoletoConnector(charges, { installationId, clock, notificationUrl }, account);
  efiBoleto.record = boletoRecord(charges);
  return { efiBoleto, boletoTransport: transport };
}

/** The API Pix connector, to a real PSP or to the embedded one. */
function openApiPix(pix: ApiPixConfig, psp: SandboxPsp | null, { config, installationId }: Deps): ApiPixConnector {
  const connection = pix.api ?? { baseUrl: psp!.apiUrl, tokenUrl: psp!.tokenUrl, clientId: psp!.clientId, clientSecret: psp!.clientSecret };
  const account = pix.api ? accountOf('api-pix', pix.api.baseUrl, pix.api.clientId) : sandboxAccount('api-pix');
  const settings = { installationId, receiverKey: config.pixReceiverKey, merchantName: config.pixMerchantName, merchantCity: config.pixMerchantCity };
  return apiPixConnector(connection, settings, account);
}

/** The payout sender: Efí itself, or the embedded PSP through the same connector. */
function openPayouts(payout: PayoutRailConfig, psp: SandboxPsp | null, apiPix: ApiPixConnector | null, installationId: string, receiverKey: string) {
  // One transport per PSP: with the embedded PSP on both rails, the API Pix client's connections and token serve the sends too.
  const sendTransport = payout.efi
    ? createPixTransport(payout.efi)
    : apiPix
      ? apiPix.client.transport
      : createPixTransport({ baseUrl: psp!.efiUrl, tokenUrl: psp!.tokenUrl, clientId: psp!.clientId, clientSecret: psp!.clientSecret });
  const account = payout.efi ? accountOf('efi', payout.efi.baseUrl, payout.efi.clientId) : sandboxAccount('efi');
  const client = createEfiPixSendClient(payout.efi?.baseUrl ?? psp!.efiUrl, sendTransport);
  const efi = efiPayoutConnector(client, { payerKey: payout.payerKey ?? receiverKey, installationId }, account);
  efi.record = sentPixRecord(client);
  efi.balance = () => efiBalance(client);
  return { efi, sendTransport };
}

/** MED 2.0 from the PSP's infractions API, on the API Pix PSP's own host, through its client's transport (CONTRACT §11.5). */
function infractionsOf(pix: ApiPixConfig, psp: SandboxPsp | null, apiPix: ApiPixConnector, account: string) {
  const host = pix.api ? new URL(pix.api.baseUrl).origin : psp!.efiUrl;
  return efiInfractionSource(createEfiInfractionsClient(host, apiPix.client.transport), account);
}

/** Where an API process of this installation last said it listens. */
async function listeningElsewhere(db: Db): Promise<string | null> {
  return maybeOne(await run<{ callback_base_url: string | null }>(db, sql`SELECT callback_base_url FROM installation`))?.callback_base_url ?? null;
}

export async function openRails(settings: RailSettings, deps: Deps): Promise<Rails> {
  const { config, installationId } = deps;
  const { pixRail: pix, payoutRail: payout, boletoRail } = settings;
  const psp = await openSandboxPsp(settings, deps);
  const apiPix = openApiPix(pix, psp, deps);
  const adyen = openAdyen(settings, deps);
  const { efi, sendTransport } = openPayouts(payout, psp, pix.provider === 'sandbox' ? apiPix : null, installationId, config.pixReceiverKey);
  let listening: string | null = null;
  const { efiBoleto, boletoTransport } = openBoletos(boletoRail, psp, deps, () => listening);
  // The sandbox mode stands for the payer's bank where a real PSP would need the operator (CONTRACT §5a, §11.4).
  const pixPsp = pix.provider === 'sandbox' ? sandboxPixPsp(apiPix) : apiPix;
  if (pix.medSource === 'efi') pixPsp.infractions = infractionsOf(pix, psp, apiPix, pixPsp.account.id);
  const issuer = boletoRail.provider === 'sandbox' ? sandboxBoletoIssuer(efiBoleto) : efiBoleto;
  const card: CardProcessor = adyen ?? sandboxCardProcessor(psp);
  // Every other rail real, no embedded PSP: the sandbox card processor keeps no record to reconcile against.
  if (!adyen && !psp) card.record = undefined;
  const rails = { PIX: pixPsp, CREDIT_CARD: card, DEBIT_CARD: card, BOLETO: issuer, PAYOUT: efi };
  await recordAccounts(deps.db, { pix: pixPsp.account, card: card.account, boleto: issuer.account, payout: efi.account });
  // Another process starting at once may split the same postings: one of the two writes them, the next start finishes.
  await splitHistory(deps.db).catch(() => {});
  const stranded = await strandedWork(deps.db, [...new Set(Object.values(rails).map((p) => p.account.id))]);

  // Without a public address, the callbacks go where an API process of this installation listens (a worker has none of its own).
  const webhookUrl = async () => {
    const base = pix.webhookBaseUrl ?? listening ?? (await listeningElsewhere(deps.db));
    return base === null ? null : `${base}/providers/pix/${pix.webhookSecret}`;
  };
  const inbound: InboundEndpoint[] = [
    // One URL for the key's Pix received and, at Efí, the payouts' sent Pix: each port confirms its own.
    pixCallback(pixPsp, pix.webhookSecret, sentPixCallback(efi)),
    chargeNotifications(efiBoleto, boletoRail.webhookSecret, installationId),
    ...(adyen ? [adyenNotifications(adyen.connection, adyenReportInbox(deps.db, adyen.account))] : []),
  ];
  const providers = createRegistry({
    rails,
    inbound,
    async listeningAt(baseUrl) {
      listening = baseUrl.replace(/\/+$/, '');
      // Start-up goes on through a short outage (a failover under way) rather than exiting.
      await retryWhileUnavailable(() => run(deps.db, sql`UPDATE installation SET callback_base_url = ${listening}`), 30_000);
      // No public address: the PSP is told this one now (not awaited: start-up goes on), so a Pix is
      // heard at once even when the installation's workers run apart; they tell it again each round,
      // and mend a failure here.
      if (pix.webhookBaseUrl === null)
        void webhookUrl()
          .then((url) => apiPix.client.putWebhook(config.pixReceiverKey, url!))
          .catch(() => {});
    },
    async close() {
      await apiPix.client.close();
      await psp?.close();
      await adyen?.client.close();
      if (sendTransport !== apiPix.client.transport) await sendTransport.close();
      await boletoTransport.close();
    },
  });
  const jobs: Job[] = [
    heldFactsJob,
    createFollowupJob(pix.reconcileSeconds * 1000),
    createPixReconcileJob(apiPix, { reconcileSeconds: pix.reconcileSeconds, receiverKey: config.pixReceiverKey, installationId, webhookUrl }),
    createPayoutJob(efi, { reconcileSeconds: pix.reconcileSeconds, payerKey: efi.payerKey, webhookUrl }),
    createBoletoJob(efiBoleto, { reconcileSeconds: pix.reconcileSeconds }),
    ...(pixPsp.infractions ? [createInfractionPollJob(pixPsp as PollingPort, pix.medPollSeconds)] : []),
    ...(adyen ? [createAdyenFollowupJob(adyen), createAdyenReportJob(adyen)] : []),
    ...(config.sandboxAutopilot ? [cardAutopilotJob, payoutAutopilotJob] : []),
  ];
  const sandbox = sandboxLevers(psp, { pix: pix.provider === 'sandbox' ? pixPsp : null, boleto: boletoRail.provider === 'sandbox' ? issuer : null });
  return { providers, jobs, apiPix, psp, adyen, efi, efiBoleto, sandbox, stranded };
}
