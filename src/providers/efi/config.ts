/** CONTRACT §11.3's variables: who pays cashouts out, and how the gateway reaches Efí. */
import { createHmac } from 'node:crypto';
import { type Env, fail, nonEmpty, oneOf } from '../../config-values.ts';
import { type ApiPixConnection, checkUrl, pem } from '../api-pix/config.ts';

/** Efí's Pix API is reached as an API Pix is: OAuth2 client credentials and mTLS. */
export type EfiConnection = ApiPixConnection;

export interface PayoutRailConfig {
  /** sandbox: the embedded PSP, reached through the real `efi` connector; efi: Efí itself. */
  provider: 'sandbox' | 'efi';
  /** Null with the sandbox (the embedded PSP hands out its own URL and credentials). */
  efi: EfiConnection | null;
  /** The platform's key at Efí that pays; null: the PIX receiver key (made at start when none is configured). */
  payerKey: string | null;
}

const efi_production = 'https://pix.api.efipay.com.br';

export function loadPayoutRailConfig(env: Env, pixReceiverKey: string | null): PayoutRailConfig {
  const provider = oneOf(env, 'PAYOUT_PROVIDER', ['sandbox', 'efi'] as const, 'sandbox');
  const payerKey = nonEmpty(env.EFI_PAYER_KEY) ?? pixReceiverKey;
  if (provider === 'sandbox') return { provider, efi: null, payerKey: pixReceiverKey };
  const required = (name: string) => nonEmpty(env[name]) ?? fail(name, 'is required with PAYOUT_PROVIDER=efi');
  // Efí posts each payout's outcome to the paying key's webhook: it must reach this gateway.
  required('PIX_WEBHOOK_BASE_URL');
  const baseUrl = (nonEmpty(env.EFI_PIX_BASE_URL) ?? efi_production).replace(/\/+$/, '');
  checkUrl('EFI_PIX_BASE_URL', baseUrl, true);
  const caFile = nonEmpty(env.EFI_CA_FILE);
  return {
    provider,
    payerKey,
    efi: {
      baseUrl,
      tokenUrl: `${baseUrl}/oauth/token`,
      clientId: required('EFI_CLIENT_ID'),
      clientSecret: required('EFI_CLIENT_SECRET'),
      cert: pem('EFI_CERT_FILE', required('EFI_CERT_FILE'), 'CERTIFICATE'),
      key: pem('EFI_KEY_FILE', required('EFI_KEY_FILE'), 'PRIVATE KEY'),
      ca: caFile ? pem('EFI_CA_FILE', caFile, 'CERTIFICATE') : undefined,
    },
  };
}

/** CONTRACT §11.4's variables: who registers boletos, and where their notifications come. */
export interface BoletoRailConfig {
  /** sandbox: the embedded PSP, reached through the real `efi` connector; efi: Efí itself. */
  provider: 'sandbox' | 'efi';
  /** Efí's Cobranças API (OAuth2 client credentials, no client certificate); null with the sandbox. */
  efi: { baseUrl: string; tokenUrl: string; clientId: string; clientSecret: string; ca?: string } | null;
  /** The public root Efí posts notifications to; null: this process's own address (the sandbox). */
  webhookBaseUrl: string | null;
  webhookSecret: string;
}

const charges_production = 'https://cobrancas.api.efipay.com.br';

export function loadBoletoRailConfig(env: Env, postbackSecret: string): BoletoRailConfig {
  const provider = oneOf(env, 'BOLETO_PROVIDER', ['sandbox', 'efi'] as const, 'sandbox');
  const webhookSecret =
    nonEmpty(env.BOLETO_WEBHOOK_SECRET) ??
    // Derived when not given, as the PIX callback's: every process of this gateway agrees on it.
    createHmac('sha256', postbackSecret).update('boleto-webhook-path-v1').digest('base64url');
  if (webhookSecret.length < 32) fail('BOLETO_WEBHOOK_SECRET', 'must be at least 32 characters');
  if (!/^[A-Za-z0-9_-]+$/.test(webhookSecret)) fail('BOLETO_WEBHOOK_SECRET', 'must be letters, digits, - or _ (it is part of a URL path)');
  const webhookBaseUrl = (nonEmpty(env.BOLETO_WEBHOOK_BASE_URL) ?? nonEmpty(env.PIX_WEBHOOK_BASE_URL))?.replace(/\/+$/, '') ?? null;
  if (webhookBaseUrl !== null) checkUrl('BOLETO_WEBHOOK_BASE_URL', webhookBaseUrl, provider === 'efi');
  if (provider === 'sandbox') return { provider, efi: null, webhookBaseUrl, webhookSecret };
  const required = (name: string) => nonEmpty(env[name]) ?? fail(name, 'is required with BOLETO_PROVIDER=efi');
  if (webhookBaseUrl === null) fail('BOLETO_WEBHOOK_BASE_URL', 'is required with BOLETO_PROVIDER=efi (or PIX_WEBHOOK_BASE_URL)');
  const baseUrl = (nonEmpty(env.EFI_CHARGES_BASE_URL) ?? charges_production).replace(/\/+$/, '');
  checkUrl('EFI_CHARGES_BASE_URL', baseUrl, true);
  const caFile = nonEmpty(env.EFI_CA_FILE);
  return {
    provider,
    webhookBaseUrl,
    webhookSecret,
    efi: {
      baseUrl,
      tokenUrl: `${baseUrl}/v1/authorize`,
      clientId: required('EFI_CLIENT_ID'),
      clientSecret: required('EFI_CLIENT_SECRET'),
      ca: caFile ? pem('EFI_CA_FILE', caFile, 'CERTIFICATE') : undefined,
    },
  };
}
