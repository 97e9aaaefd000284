// Throwaway certificates for TLS tests and benchmarks, made at run time with OpenSSL's API
// (EC P-256 keys, SHA-256 signatures, PEM files): a CA, certificates it signs for a learner
// (names localhost and 127.0.0.1) and an actor, a second CA that signs nothing of theirs, and
// certificates that have expired or are not valid yet. Nothing is checked in: every run makes its
// own.
#pragma once

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

namespace seedrl::test {

struct TlsFiles {
  std::string ca;                                  ///< the CA that signs the two below
  std::string server_certificate, server_key;      ///< localhost, 127.0.0.1
  std::string client_certificate, client_key;      ///< an actor's, signed by `ca`
  std::string other_ca;                            ///< a CA that signed none of these
  std::string stranger_certificate, stranger_key;  ///< an actor's, signed by `other_ca`
  std::string expired_certificate, expired_key;    ///< signed by `ca`, expired an hour ago
  std::string future_certificate, future_key;      ///< signed by `ca`, valid from tomorrow
};

namespace tls_detail {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* x) const { X509_free(x); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

inline void require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("tls test files: ") + what);
}

inline Key make_key() {
  Key key(EVP_EC_gen("P-256"));
  require(key != nullptr, "EC key generation failed");
  return key;
}

inline void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  require(ext != nullptr, "extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key`, named `common_name`, valid from now + `from_s` to now + `to_s`, signed
// by `issuer`/`issuer_key` (itself when null). A CA, or a leaf with `names` (subjectAltName).
inline Cert make_certificate(EVP_PKEY* key, const char* common_name, X509* issuer,
                             EVP_PKEY* issuer_key, bool ca, const char* names, long from_s,
                             long to_s, long serial) {
  Cert cert(X509_new());
  require(cert != nullptr, "X509_new");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), from_s);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), to_s);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  if (ca) {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    add_extension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(cert.get(), signer, NID_ext_key_usage, "serverAuth,clientAuth");
    if (names != nullptr) add_extension(cert.get(), signer, NID_subject_alt_name, names);
  }
  add_extension(cert.get(), signer, NID_subject_key_identifier, "hash");
  require(X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) > 0,
          "signing");
  return cert;
}

inline void write_certificate(const std::string& path, X509* cert) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  require(f != nullptr, "cannot write a certificate");
  PEM_write_X509(f, cert);
  std::fclose(f);
}

inline void write_key(const std::string& path, EVP_PKEY* key) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  require(f != nullptr, "cannot write a key");
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
}

}  // namespace tls_detail

/// Makes the files of TlsFiles in `directory` (created if needed) and returns their paths.
/// `server_lifetime_s`: how long the learner's certificate stays valid from now.
inline TlsFiles make_tls_files(const std::filesystem::path& directory,
                               long server_lifetime_s = 86400) {
  using namespace tls_detail;
  std::filesystem::create_directories(directory);
  auto file = [&](const char* name) { return (directory / name).string(); };
  constexpr long kDay = 86400;
  TlsFiles f;
  const Key ca_key = make_key(), other_key = make_key();
  const Cert ca = make_certificate(ca_key.get(), "seedrl test CA", nullptr, nullptr, true, nullptr,
                                   -kDay, 30 * kDay, 1);
  const Cert other = make_certificate(other_key.get(), "another CA", nullptr, nullptr, true,
                                      nullptr, -kDay, 30 * kDay, 2);
  f.ca = file("ca.pem");
  f.other_ca = file("other_ca.pem");
  write_certificate(f.ca, ca.get());
  write_certificate(f.other_ca, other.get());
  auto leaf = [&](const char* stem, const char* cn, const Cert& issuer, const Key& issuer_key,
                  long from_s, long to_s, long serial, std::string* cert_path,
                  std::string* key_path) {
    const Key key = make_key();
    const Cert cert = make_certificate(key.get(), cn, issuer.get(), issuer_key.get(), false,
                                       "DNS:localhost,IP:127.0.0.1", from_s, to_s, serial);
    *cert_path = file((std::string(stem) + ".pem").c_str());
    *key_path = file((std::string(stem) + "_key.pem").c_str());
    write_certificate(*cert_path, cert.get());
    write_key(*key_path, key.get());
  };
  leaf("server", "localhost", ca, ca_key, -60, server_lifetime_s, 10, &f.server_certificate,
       &f.server_key);
  leaf("client", "actor 1", ca, ca_key, -60, kDay, 11, &f.client_certificate, &f.client_key);
  leaf("stranger", "actor 2", other, other_key, -60, kDay, 12, &f.stranger_certificate,
       &f.stranger_key);
  leaf("expired", "actor 3", ca, ca_key, -2 * kDay, -3600, 13, &f.expired_certificate,
       &f.expired_key);
  leaf("future", "actor 4", ca, ca_key, kDay, 2 * kDay, 14, &f.future_certificate, &f.future_key);
  return f;
}

}  // namespace seedrl::test
