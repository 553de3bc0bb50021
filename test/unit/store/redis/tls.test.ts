/**
 * A TLS connection refused for the server's certificate is told apart from other refusals, and its error says what to
 * set (test/scenarios/redis-tls.test.ts shows it against a server a private CA signed, and the fix working).
 */
import { expect, test } from "bun:test";
import { untrustedCertificate } from "../../../../src/store/redis/tls.ts";

test("Bun's certificate errors get the NODE_EXTRA_CA_CERTS step; a refused or closed connection does not", () => {
  const fix = "if a private CA signed it, export NODE_EXTRA_CA_CERTS=/path/to/ca.pem for every agentmail process";
  for (const error of [
    { code: "SELF_SIGNED_CERT_IN_CHAIN", message: "self signed certificate in certificate chain" },
    { code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE", message: "unable to verify the first certificate" },
    { code: "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", message: "unable to get local issuer certificate" },
  ]) {
    expect(untrustedCertificate(error)).toBe(`the server's TLS certificate is not trusted (${error.message}); ${fix}`);
  }
  expect(untrustedCertificate({ code: "ERR_REDIS_CONNECTION_CLOSED", message: "Connection closed" })).toBeNull();
});
