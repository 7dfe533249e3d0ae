import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OperatorClient, SellerClient, verifyWebhook } from '../src/index.ts';

const env = process.env;
const baseUrl = env.GATEWAY_URL ?? 'http://127.0.0.1:3000';
const seller = new SellerClient({ baseUrl, publicKey: env.PUBLIC_KEY ?? '', privateKey: env.PRIVATE_KEY ?? '' });
const { secret } = await seller.getSigningSecret();

// A tiny receiver: the first notification whose signature checks out settles `notified`.
let settle: (payload: unknown) => void = () => {};
const notified = new Promise((resolve) => (settle = resolve));
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      settle(verifyWebhook(Buffer.concat(chunks), req.headers, secret)); // the raw bytes, as received
      res.writeHead(200).end();
    } catch {
      res.writeHead(400).end(); // not signed by the gateway: ignore it
    }
  });
});
await new Promise<void>((resolve) => receiver.listen(Number(env.RECEIVER_PORT ?? 4000), '127.0.0.1', resolve));
const { port } = receiver.address() as AddressInfo;
const webhook = await seller.createWebhook({ url: `http://127.0.0.1:${port}/webhooks`, types: ['TRANSACTION'] });

const { sale } = await seller.createSale({
  amount: 15000,
  paymentMethod: 'PIX',
  customer: { name: 'Maria Silva', email: 'maria@example.com' },
  items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
});
console.log('PIX copia e cola:', sale.payment.pix?.key);

// Sandbox only: pay it as the payer's bank would (operator token). In production the payer pays.
const { externalTransactionId } = await seller.getTransaction(sale.id);
await new OperatorClient({ baseUrl, adminToken: env.ADMIN_TOKEN ?? '' }).sandboxPayPix(externalTransactionId);

console.log('verified webhook:', await notified);
await seller.deleteWebhook(webhook.id);
receiver.closeAllConnections();
receiver.close();
