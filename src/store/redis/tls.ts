/** A TLS handshake refused for the server's certificate: what Bun's client reports, and what to do about it. */

interface ClientError {
  code?: string;
  message?: string;
}

/**
 * Why a TLS connection was refused for the certificate, with the fix, or null when it was refused for something else.
 * Bun's client trusts the system's CAs and those in NODE_EXTRA_CA_CERTS, read when the process starts.
 */
export function untrustedCertificate(error: ClientError): string | null {
  const text = error.message ?? String(error);
  if (!/certificate|self.signed|CERT_|issuer/i.test(`${error.code ?? ""} ${text}`)) return null;
  return `the server's TLS certificate is not trusted (${text}); if a private CA signed it, export NODE_EXTRA_CA_CERTS=/path/to/ca.pem for every agentmail process`;
}
