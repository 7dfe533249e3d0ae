/** CONTRACT §11.3's variables: who pays cashouts out, and how the gateway reaches Efí. */
import { type Env, fail, nonEmpty, oneOf } from '../../config-values.ts';
import { type ApiPixConnection, checkUrl, pem } from '../api-pix/config.ts';

/** Efí's Pix API is reached as an API Pix is: OAuth2 client credentials and mTLS. */
export type EfiConnection = ApiPixConnection;

export interface PayoutRailConfig {
  /** sandbox: the embedded PSP, reached through the real `efi` connector; efi: Efí itself. */
  provider: 'sandbox' | 'efi';
  /** Null with the sandbox (the embedded PSP hands out its own URL and credentials). */
  efi: EfiConnection | null;
  /** The platform's key at Efí that pays. */
  payerKey: string;
}

const efi_production = 'https://pix.api.efipay.com.br';

export function loadPayoutRailConfig(env: Env, pixReceiverKey: string): PayoutRailConfig {
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
