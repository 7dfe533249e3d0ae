import assert from 'node:assert/strict';
import dns, { type LookupAddress } from 'node:dns';
import { after, afterEach, before, describe, it, mock } from 'node:test';
import { isPrivateAddress, literalPrivateTarget, privateTargetReason, publicOnlyLookup } from '../../src/notifications/address-guard.ts';

// No test may reach a resolver: literal and loopback-name targets must be decided without one, and
// a name's lookup gets its answers from `answers` (null: no lookup expected, so one fails the test).
// The guard swallows a failed lookup (the name is accepted), so unexpected ones are counted and checked after each test.
let answers: LookupAddress[] | null = null;
const unexpected: string[] = [];
before(() => {
  mock.method(dns, 'lookup', (name: string, _options: object, cb: (err: Error | null, a: LookupAddress[]) => void) => {
    if (answers !== null) return cb(null, answers);
    unexpected.push(name);
    cb(Object.assign(new Error(`unexpected DNS lookup of ${name}`), { code: 'ENOTFOUND' }), []);
  });
});
afterEach(() => {
  answers = null;
  assert.deepEqual(unexpected.splice(0), [], 'names looked up');
});
after(() => {
  mock.restoreAll();
});

/** `host` goes into a URL; `raw` are the same address as strings a resolver or caller may hand isPrivateAddress. */
const refused: { host: string; raw: string[] }[] = [
  // IPv4-compatible ::/96 (deprecated): ipaddr calls ::7f00:1 'unicast', and reads "::a.b.c.d" as IPv4-mapped.
  { host: '[::127.0.0.1]', raw: ['::127.0.0.1', '::7f00:1', '0:0:0:0:0:0:127.0.0.1'] },
  { host: '[::8.8.8.8]', raw: ['::8.8.8.8', '::808:808'] },
  { host: '[::ffff:0:127.0.0.1]', raw: ['::ffff:0:127.0.0.1', '::ffff:0:7f00:1'] },
  { host: '[64:ff9b::127.0.0.1]', raw: ['64:ff9b::127.0.0.1', '64:ff9b::7f00:1'] },
  { host: '[64:ff9b::10.0.0.1]', raw: ['64:ff9b::a00:1'] },
  // RFC 8215 local-use NAT64 prefix: refused even around a public IPv4 address.
  { host: '[64:ff9b:1::8.8.8.8]', raw: ['64:ff9b:1::808:808'] },
  { host: '[2002:7f00:1::]', raw: ['2002:7f00:1::'] },
  { host: '[2002:c0a8:0101::1]', raw: ['2002:c0a8:101::1'] },
  { host: '[2002:0a00:0001::]', raw: ['2002:a00:1::'] },
  { host: '[::ffff:127.0.0.1]', raw: ['::ffff:127.0.0.1', '::FFFF:7F00:1'] },
  { host: '[::ffff:7f00:1]', raw: ['::ffff:7f00:1'] },
  { host: '[::ffff:169.254.169.254]', raw: ['::ffff:a9fe:a9fe'] },
  { host: '[fe80::1]', raw: ['fe80::1', 'fe80::1%eth0'] },
  { host: '[fc00::1]', raw: ['fc00::1'] },
  { host: '[fd12::1]', raw: ['fd12::1'] },
  { host: '[::1]', raw: ['::1', '0:0:0:0:0:0:0:1'] },
  { host: '[::]', raw: ['::'] },
  { host: '[ff02::1]', raw: ['ff02::1'] },
  { host: '[2001:db8::1]', raw: ['2001:db8::1'] },
  { host: '[2001:0:4136:e378:8000:63bf:3fff:fdd2]', raw: ['2001:0:4136:e378:8000:63bf:3fff:fdd2'] }, // Teredo
  { host: '0x7f.1', raw: ['0x7f.1'] },
  { host: '2130706433', raw: ['2130706433'] },
  { host: '017700000001', raw: ['017700000001'] },
  { host: '127.1', raw: ['127.1', '127.0.1'] },
  { host: '0177.0.0.1', raw: ['0177.0.0.1', '0x7f.0.0.1', '0177.0.0.01'] },
  { host: '127.0.0.1', raw: ['127.0.0.1'] },
  { host: '10.0.0.1', raw: ['10.0.0.1'] },
  { host: '172.16.0.1', raw: ['172.16.0.1', '172.31.255.255'] },
  { host: '192.168.1.1', raw: ['192.168.1.1'] },
  { host: '169.254.169.254', raw: ['169.254.169.254'] },
  { host: '100.64.0.1', raw: ['100.64.0.1', '100.127.255.255'] },
  { host: '0.0.0.0', raw: ['0.0.0.0', '0'] },
  { host: '224.0.0.1', raw: ['224.0.0.1'] },
  { host: '255.255.255.255', raw: ['255.255.255.255'] },
  { host: '192.0.2.1', raw: ['192.0.2.1'] }, // TEST-NET-1
  { host: '198.51.100.7', raw: ['198.51.100.7'] }, // TEST-NET-2
  { host: '240.0.0.1', raw: ['240.0.0.1'] },
];

const loopbackNames = ['localhost', 'localhost.', 'LOCALHOST', 'foo.localhost', 'foo.localhost.', 'a.b.LocalHost.'];

const accepted: { host: string; raw: string[] }[] = [
  { host: '8.8.8.8', raw: ['8.8.8.8'] },
  { host: '[2606:4700:4700::1111]', raw: ['2606:4700:4700::1111'] },
  { host: '[64:ff9b::8.8.8.8]', raw: ['64:ff9b::8.8.8.8', '64:ff9b::808:808'] },
  { host: '[::ffff:8.8.8.8]', raw: ['::ffff:8.8.8.8', '::ffff:808:808'] },
  { host: '[::ffff:0:8.8.8.8]', raw: ['::ffff:0:808:808'] },
  { host: '[2002:0808:0808::1]', raw: ['2002:808:808::1'] },
  // Neighbours of refused ranges.
  { host: '172.32.0.1', raw: ['172.32.0.1'] },
  { host: '100.128.0.1', raw: ['100.128.0.1'] },
  { host: '11.0.0.1', raw: ['11.0.0.1'] },
  // Other IPv4 notations are decided by the address they denote, as the resolver would read them.
  { host: '134744072', raw: ['134744072', '0x8.0x8.0x8.0x8', '8.526344', '01002004010', '0127.0.0.1'] },
];

describe('isPrivateAddress', () => {
  for (const { raw } of refused) {
    it(`refuses ${raw.join(', ')}`, () => {
      for (const address of raw) assert.equal(isPrivateAddress(address), true, address);
    });
  }

  for (const { raw } of accepted) {
    it(`accepts ${raw.join(', ')}`, () => {
      for (const address of raw) assert.equal(isPrivateAddress(address), false, address);
    });
  }

  it('refuses what is not an IP address, and dotted IPv6 tails that inet_pton would not read', () => {
    // ipaddr alone reads "::ffff:0177.0.0.1" as ::ffff:177.0.0.1 (public) and accepts hex there.
    for (const s of [
      '',
      'localhost',
      'example.com',
      '8.8.8.8.',
      ' 8.8.8.8',
      '08.0.0.1',
      '4294967296',
      '1::2::3',
      '::ffff:0177.0.0.1',
      '::ffff:0x8.8.8.8',
      '::0x7f.0.0.1',
      '[::1]',
    ]) {
      assert.equal(isPrivateAddress(s), true, JSON.stringify(s));
    }
  });
});

describe('URLs', () => {
  for (const { host } of refused) {
    it(`refuses http://${host}/`, async () => {
      assert.equal(literalPrivateTarget(new URL(`http://${host}/`)), true);
      assert.match((await privateTargetReason(`http://${host}/hook`)) ?? '', /is a loopback or private address$/);
    });
  }

  for (const name of loopbackNames) {
    it(`refuses the loopback name ${name} without resolving it`, async () => {
      assert.equal(literalPrivateTarget(new URL(`https://${name}:8443/`)), true);
      assert.match((await privateTargetReason(`https://${name}:8443/hook`)) ?? '', /localhost is a loopback name$/);
    });
  }

  for (const { host } of accepted) {
    it(`accepts http://${host}/ without resolving it`, async () => {
      assert.equal(literalPrivateTarget(new URL(`http://${host}/`)), false);
      assert.equal(await privateTargetReason(`http://${host}/hook`), null);
    });
  }

  it('refuses a name that resolves to a private address, and accepts one whose answers are all public', async () => {
    answers = [
      { address: '8.8.8.8', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ];
    assert.equal(await privateTargetReason('https://hooks.example.com/x'), 'hooks.example.com resolves to 10.1.2.3, a loopback or private address');
    answers = [{ address: '8.8.8.8', family: 4 }];
    assert.equal(await privateTargetReason('https://hooks.example.com/x'), null);
  });

  it('does not take names that merely contain "localhost" for loopback names', () => {
    for (const name of ['localhost.example.com', 'mylocalhost', 'localhost-1'])
      assert.equal(literalPrivateTarget(new URL(`http://${name}/`)), false, name);
  });
});

describe('publicOnlyLookup', () => {
  const run = (options: object) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) => {
      publicOnlyLookup('hooks.example.com', options, (err, address, family) => resolve({ err, address, family }));
    });

  it('refuses when any answer is private, including the "::a.b.c.d" form inet_ntop gives IPv4-compatible addresses', async () => {
    for (const bad of [
      { address: '::127.0.0.1', family: 6 },
      { address: '::ffff:10.0.0.1', family: 6 },
      { address: '64:ff9b::a9fe:a9fe', family: 6 },
      { address: '127.0.0.1', family: 4 },
    ]) {
      answers = [{ address: '8.8.8.8', family: 4 }, bad];
      const { err, address } = await run({});
      assert.equal(err?.code, 'EPRIVATE', bad.address);
      assert.match(err!.message, /private/);
      assert.deepEqual(address, []);
    }
  });

  it('passes public answers through, as a list or as the first address', async () => {
    answers = [
      { address: '2606:4700:4700::1111', family: 6 },
      { address: '8.8.8.8', family: 4 },
    ];
    assert.deepEqual(await run({ all: true }), { err: null, address: answers, family: undefined });
    assert.deepEqual(await run({}), { err: null, address: '2606:4700:4700::1111', family: 6 });
  });
});
