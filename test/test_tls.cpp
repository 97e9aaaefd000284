// TLS on the TCP transport, with certificates made at test time (support/tls_certificates.hpp):
// bad files are refused by name, actors step over TLS 1.3 (and 1.2 as an option), and every
// fault is refused and logged with the peer's address without stopping the server or the other
// actors: a plain client, a certificate that does not verify (another CA, another name, expired,
// not valid yet), an actor without a certificate where one is required, a peer that stalls in
// the handshake, a flood of half-open handshakes. (Also run under ThreadSanitizer in CI.)
#include <doctest/doctest.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "seedrl/transport/remote_client.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "support/tls_certificates.hpp"
#include "support/transport_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_tls {

using namespace seedrl;
using namespace seedrl::test;
using namespace std::chrono_literals;

namespace {

const TlsFiles& files() {
  static const TlsFiles f =
      make_tls_files(std::filesystem::temp_directory_path() / str_cat("seedrl_tls_", ::getpid()));
  return f;
}

using Log = ServerLog;

SocketServerOptions tls_server(Log* log = nullptr) {
  SocketServerOptions o = server_options();
  o.tls.certificate = files().server_certificate;
  o.tls.private_key = files().server_key;
  if (log) o.log = log->sink();
  return o;
}

RemoteClientOptions tls_client(const SocketAddress& address) {
  RemoteClientOptions o = client_options(address);
  o.tls.ca = files().ca;
  return o;
}

// A TLS client made with OpenSSL alone, for what RemoteClient's own validation would refuse to
// present (an expired certificate, one not valid yet) and for pinning the version. Returns ""
// when the handshake and a first read went through, else what OpenSSL said.
std::string raw_tls_client(const SocketAddress& address, const std::string& certificate,
                           const std::string& key, int max_version = 0,
                           const char* tls12_ciphers = nullptr) {
  RawConnection tcp(address);
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  if (max_version) SSL_CTX_set_max_proto_version(ctx, max_version);
  if (tls12_ciphers) SSL_CTX_set_cipher_list(ctx, tls12_ciphers);
  if (!certificate.empty()) {
    SSL_CTX_use_certificate_file(ctx, certificate.c_str(), SSL_FILETYPE_PEM);
    SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM);
  }
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, tcp.fd());
  std::string error;
  auto say = [&] {
    const unsigned long e = ERR_get_error();
    error = e ? ERR_reason_error_string(e) : "connection closed";
  };
  if (SSL_connect(ssl) != 1) {
    say();
  } else {
    // TLS 1.3 settles client certificates after the client's handshake: the refusal comes as an
    // alert on the first read (a HELLO sent first, so that an accepted client gets a WELCOME).
    const std::string hello = hello_frame(kToken);
    SSL_write(ssl, hello.data(), static_cast<int>(hello.size()));
    char byte;
    if (SSL_read(ssl, &byte, 1) <= 0) say();
  }
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  ERR_clear_error();
  return error;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("TLS options: each bad file or setting is refused, naming it and what is wrong") {
  const TlsFiles& f = files();
  const std::string dir = std::filesystem::path(f.ca).parent_path().string();
  write_text(dir + "/not_pem.txt", "hello\n");
  auto refuse = [](const auto& options, const std::string& expected) {
    std::string message;
    try {
      options.validate();
    } catch (const Error& e) {
      message = e.what();
    }
    CAPTURE(message);
    CHECK(message.find(expected) != std::string::npos);
  };
  SocketServerOptions s = tls_server();
  CHECK_NOTHROW(s.validate());
  CHECK(s.mode() == "TLS 1.3, no client certificates");
  s.tls.certificate = dir + "/missing.pem";
  refuse(s, "SocketServerOptions.tls.certificate: cannot open '" + dir + "/missing.pem'");
  s.tls.certificate = dir + "/not_pem.txt";
  refuse(s, "'" + dir + "/not_pem.txt' holds no PEM certificate");
  s.tls.certificate = f.server_certificate;
  s.tls.private_key = f.client_key;
  refuse(s, "the key in '" + f.client_key + "' does not match the certificate in '" +
                f.server_certificate + "'");
  s.tls.certificate = f.expired_certificate;
  s.tls.private_key = f.expired_key;
  refuse(s, "the certificate in '" + f.expired_certificate + "' expired on ");
  s.tls.certificate = f.future_certificate;
  s.tls.private_key = f.future_key;
  refuse(s, "the certificate in '" + f.future_certificate + "' is not valid until ");
  s = tls_server();
  s.tls.require_client_certificate = true;
  refuse(s, "require_client_certificate needs tls.client_ca");
  s = server_options("unix:/tmp/seedrl_tls.sock");
  s.tls.certificate = f.server_certificate;
  s.tls.private_key = f.server_key;
  refuse(s, "TLS is for TCP listeners");
  s = server_options();
  s.tls.client_ca = f.ca;
  refuse(s, "TLS settings without a certificate");
  s = tls_server();
  s.handshakes_per_second = -1.0;
  refuse(s, "SocketServerOptions.handshakes_per_second must be finite and >= 0");
  s = tls_server();
  s.handshake_burst = 0;
  refuse(s, "SocketServerOptions.handshake_burst must be >= 1");
  s = tls_server();
  s.max_pending_handshakes = -1;
  refuse(s, "SocketServerOptions.max_pending_handshakes must be >= 0");

  RemoteClientOptions c = tls_client(SocketAddress::parse("127.0.0.1:1"));
  CHECK_NOTHROW(c.validate());
  c.tls.ca = dir + "/not_pem.txt";
  refuse(c, "RemoteClientOptions.tls.ca: '" + dir + "/not_pem.txt' holds no PEM certificate");
  c.tls.ca = f.ca;
  c.tls.certificate = f.client_certificate;
  refuse(c, "RemoteClientOptions.tls.private_key: a certificate ('" + f.client_certificate +
                "') needs its private key");
  c.tls.private_key = f.server_key;
  refuse(c, "does not match the certificate");
  c = client_options(SocketAddress::parse("127.0.0.1:1"));
  c.tls.server_name = "learner";
  refuse(c, "TLS settings without a CA");
  CHECK(parse_tls_version("1.2", "--tls-version") == TlsVersion::tls12);
  CHECK_THROWS_WITH_AS(parse_tls_version("1.1", "--tls-version"),
                       "--tls-version: TLS version '1.1' is not 1.2 or 1.3", Error);
}

TEST_CASE("TLS: actors step over TLS 1.3, 1.2 only where the learner allows it; it says so") {
  Log log;
  FakeEndpoint endpoint;
  SocketServer server(endpoint, tls_server(&log));
  server.start();
  CHECK(log.wait_for({"listening on 127.0.0.1:", "(TLS 1.3, no client certificates)"}));
  RemoteClient client(tls_client(server.address()));
  REQUIRE(client.connect(connect_request(11, 3)).is_ok());
  ClientBuffers buffers(3);
  for (int value : {0, 1, 2, 4, 5}) {
    REQUIRE(buffers.step(client, static_cast<float>(value)).is_ok());
    CHECK(buffers.actions == std::vector<std::int32_t>(3, value % 3));
  }
  client.disconnect();
  CHECK(endpoint.steps() == 5);
  // A client that speaks at most TLS 1.2 is refused by a TLS 1.3 learner...
  CHECK(raw_tls_client(server.address(), "", "", TLS1_2_VERSION) != "");
  server.stop();
  // ... and welcome where the learner allows 1.2.
  SocketServerOptions options = tls_server(&log);
  options.tls.min_version = TlsVersion::tls12;
  SocketServer older(endpoint, options);
  older.start();
  CHECK(raw_tls_client(older.address(), "", "", TLS1_2_VERSION) == "");
  CHECK(log.wait_for({"(TLS 1.2+, no client certificates)"}));
  // TLS 1.2 with an ephemeral key exchange and an AEAD cipher only: a client that offers only
  // CBC suites, or suites without forward secrecy, finds none in common.
  for (const char* weak : {"AES128-SHA:AES256-SHA", "ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA",
                           "AES128-GCM-SHA256:AES256-GCM-SHA384"}) {
    CAPTURE(weak);
    CHECK(raw_tls_client(older.address(), "", "", TLS1_2_VERSION, weak) != "");
  }
  CHECK(raw_tls_client(older.address(), "", "", TLS1_2_VERSION,
                       "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256") == "");
}

TEST_CASE("TLS: an actor whose server name the certificate check cannot take does not connect") {
  Log log;
  FakeEndpoint endpoint;
  SocketServer server(endpoint, tls_server(&log));
  server.start();
  // An IPv6 address with a zone: an address to Asio, not to OpenSSL's name check. Without the
  // check any certificate of the CA would do, so the actor refuses to connect at all.
  RemoteClientOptions zoned = tls_client(server.address());
  zoned.tls.server_name = "fe80::1%lo";
  RemoteClient client(zoned);
  const Status refused = client.connect(connect_request(11, 1));
  CAPTURE(refused);
  CHECK(refused.is_invalid_argument());
  CHECK(refused.message().find("cannot require the name 'fe80::1%lo'") != std::string::npos);
  CHECK(endpoint.connects() == 0);
}

TEST_CASE("TLS: a plain actor is told to use TLS; certificates that do not verify stop actors") {
  Log log;
  FakeEndpoint endpoint;
  SocketServer server(endpoint, tls_server(&log));
  server.start();
  const SocketAddress address = server.address();

  RemoteClient plain(client_options(address));
  const Status refused = plain.connect(connect_request(11, 1));
  CHECK(refused.is_invalid_argument());
  CHECK(refused.message().find("this server speaks TLS") != std::string::npos);
  CHECK(log.wait_for({"127.0.0.1:", "refused (unauthorized): this server speaks TLS"}));

  RemoteClientOptions other_ca = tls_client(address);
  other_ca.tls.ca = files().other_ca;
  RemoteClient stranger(other_ca);
  const Status unverified = stranger.connect(connect_request(11, 1));
  CAPTURE(unverified);
  CHECK(unverified.is_invalid_argument());
  CHECK(unverified.message().find("certificate verify failed") != std::string::npos);
  CHECK(unverified.message().find("unable to get local issuer certificate") != std::string::npos);
  CHECK(log.wait_for({"127.0.0.1:", "TLS handshake refused"}));

  RemoteClientOptions wrong_name = tls_client(address);
  wrong_name.tls.server_name = "learner.example";
  RemoteClient misnamed(wrong_name);
  const Status mismatch = misnamed.connect(connect_request(11, 1));
  CAPTURE(mismatch);
  CHECK(mismatch.is_invalid_argument());
  CHECK(mismatch.message().find("hostname mismatch") != std::string::npos);

  // The good actor is unaffected by any of it.
  RemoteClient good(tls_client(address));
  REQUIRE(good.connect(connect_request(11, 1)).is_ok());
  ClientBuffers buffers(1);
  CHECK(buffers.step(good, 2.0f).is_ok());
  CHECK(server.stats().refused >= 3);
}

TEST_CASE("TLS: a learner certificate that expires while the learner runs is refused") {
  const TlsFiles soon = make_tls_files(
      std::filesystem::temp_directory_path() / str_cat("seedrl_tls_soon_", ::getpid()), 2);
  FakeEndpoint endpoint;
  SocketServerOptions options = server_options();
  options.tls.certificate = soon.server_certificate;
  options.tls.private_key = soon.server_key;
  SocketServer server(endpoint, options);  // valid now
  server.start();
  std::this_thread::sleep_for(3s);
  RemoteClientOptions client_opts = client_options(server.address());
  client_opts.tls.ca = soon.ca;
  RemoteClient client(client_opts);
  const Status expired = client.connect(connect_request(11, 1));
  CAPTURE(expired);
  CHECK(expired.is_invalid_argument());
  CHECK(expired.message().find("certificate has expired") != std::string::npos);
}

TEST_CASE("TLS: mutual TLS refuses actors without a current certificate from its CA") {
  Log log;
  FakeEndpoint endpoint;
  SocketServerOptions options = tls_server(&log);
  options.tls.client_ca = files().ca;
  options.tls.require_client_certificate = true;
  SocketServer server(endpoint, options);
  server.start();
  const SocketAddress address = server.address();
  CHECK(log.wait_for({"(TLS 1.3, client certificates required)"}));

  RemoteClient anonymous(tls_client(address));
  const Status no_certificate = anonymous.connect(connect_request(11, 1));
  CAPTURE(no_certificate);
  CHECK(no_certificate.is_invalid_argument());
  CHECK(no_certificate.message().find("certificate required") != std::string::npos);
  CHECK(log.wait_for({"127.0.0.1:", "TLS handshake refused", "peer did not return a certificate"}));

  RemoteClientOptions with_certificate = tls_client(address);
  with_certificate.tls.certificate = files().client_certificate;
  with_certificate.tls.private_key = files().client_key;
  RemoteClient member(with_certificate);
  REQUIRE(member.connect(connect_request(11, 1)).is_ok());
  ClientBuffers buffers(1);
  CHECK(buffers.step(member, 1.0f).is_ok());

  // Certificates RemoteClient would not present (its checks refuse them first): another CA's,
  // an expired one, one not valid yet. The learner refuses each and says why.
  CHECK(raw_tls_client(address, files().stranger_certificate, files().stranger_key) != "");
  CHECK(log.wait_for({"TLS handshake refused", "unable to get local issuer certificate"}));
  CHECK(raw_tls_client(address, files().expired_certificate, files().expired_key) != "");
  CHECK(log.wait_for({"TLS handshake refused", "certificate has expired"}));
  CHECK(raw_tls_client(address, files().future_certificate, files().future_key) != "");
  CHECK(log.wait_for({"TLS handshake refused", "certificate is not yet valid"}));
  CHECK(buffers.step(member, 2.0f).is_ok());  // the member steps on
}

TEST_CASE("TLS: stalled handshakes and a flood of half-open ones are closed at the deadline") {
  Log log;
  FakeEndpoint endpoint;
  SocketServerOptions options = tls_server(&log);
  // A deadline a second after each connection: the flood's refusals at accept (its last 37
  // connections) are all logged before the first deadline passes, however slowly the run goes.
  options.handshake_timeout = 1s;
  options.max_connections = 64;
  // The address's burst alone decides who is admitted, however slowly the run goes (no refill
  // to speak of, no cap on handshakes in progress).
  options.handshakes_per_second = 0.01;
  options.max_pending_handshakes = 0;
  SocketServer server(endpoint, options);
  server.start();
  const SocketAddress address = server.address();
  RemoteClient member(tls_client(address));
  REQUIRE(member.connect(connect_request(11, 1)).is_ok());

  // 100 connections that never finish a handshake: 60 silent, 40 that stop inside a ClientHello.
  std::vector<std::unique_ptr<RawConnection>> flood;
  for (int i = 0; i < 100; ++i) {
    flood.push_back(std::make_unique<RawConnection>(address));
    if (i % 5 < 2) CHECK(flood.back()->send(std::string("\x16\x03\x01\x02\x00", 5)));
  }
  // Meanwhile the member keeps stepping.
  ClientBuffers buffers(1);
  int steps = 0;
  const auto until = std::chrono::steady_clock::now() + 600ms;
  while (std::chrono::steady_clock::now() < until) {
    REQUIRE(buffers.step(member, 1.0f).is_ok());
    ++steps;
  }
  CHECK(steps > 0);
  for (auto& raw : flood) CHECK(raw->closed_by_peer(10s));
  // The address's burst (64, the member's handshake included) admitted 63 of the 100; the other
  // 37 were closed at accept, the 63 at their deadline. Each refusal is logged with the peer's
  // address, at most 10 lines a second (both kinds share the log); the rest are summed up, so
  // every one of the 100 is either said or counted.
  CHECK(server.stats().refused_at_accept == 37);
  const Log::Refusals refusals = log.wait_for_refusals(
      "127.0.0.1:",
      {"refused at accept: more than 64 connections at once or 0.01 a second from "
       "127.0.0.1",
       "no TLS handshake within 1 s of connecting"},
      100);
  CAPTURE(log.text());
  CHECK(refusals.total() == 100);
  CHECK(refusals.said[0] >= 1);  // the refusals at accept come first
  CHECK(refusals.said[0] + refusals.said[1] >= 10);
  CHECK(refusals.summed >= 1);  // 100 refusals in about a second: some are summed up
  // The deadline's refusal is said, or is the last of the lines a summary counts.
  CHECK(log.wait_for({"127.0.0.1:", "no TLS handshake within 1 s of connecting"}));
  CHECK(buffers.step(member, 2.0f).is_ok());
  CHECK(server.stats().active == 1);
}

TEST_CASE("TLS: a flood from one address is refused before any TLS work, in a few log lines") {
  Log log;
  FakeEndpoint endpoint;
  SocketServerOptions options = tls_server(&log);
  options.handshake_timeout = 10s;  // only the refusals at accept close within the test
  options.max_connections = 128;
  options.handshake_burst = 3;
  options.handshakes_per_second = 0.01;  // no refill to speak of, however slow the run
  SocketServer server(endpoint, options);
  server.start();
  const SocketAddress address = server.address();
  RemoteClient member(tls_client(address));  // the first of the 3
  REQUIRE(member.connect(connect_request(11, 1)).is_ok());

  // 30 connections at once from the same address: 2 more are admitted (and wait in their
  // handshakes), 28 are closed at once; the member keeps stepping.
  std::vector<std::unique_ptr<RawConnection>> flood;
  for (int i = 0; i < 30; ++i) flood.push_back(std::make_unique<RawConnection>(address));
  int closed = 0;
  for (auto& raw : flood) closed += raw->closed_by_peer(300ms) ? 1 : 0;
  CHECK(closed == 28);
  ClientBuffers buffers(1);
  CHECK(buffers.step(member, 1.0f).is_ok());
  CHECK(server.stats().refused_at_accept == 28);
  // At most 10 lines a second name the address and the rule; the rest are summed up, a line
  // for each second that had more: every refusal is either said or counted.
  const Log::Refusals refusals = log.wait_for_refusals(
      "127.0.0.1:",
      {": refused at accept: more than 3 connections at once or 0.01 a second from 127.0.0.1"}, 28,
      5s);
  CHECK(refusals.total() == 28);
  CHECK(refusals.said[0] >= 10);  // the first second's 10
  CHECK(refusals.summed >= 1);    // 28 refusals in well under a second: the rest summed up
}

TEST_CASE("TLS: handshakes in progress are capped; the cap frees as they end") {
  Log log;
  FakeEndpoint endpoint;
  SocketServerOptions options = tls_server(&log);
  options.handshake_timeout = 500ms;
  options.max_pending_handshakes = 2;
  SocketServer server(endpoint, options);
  server.start();
  const SocketAddress address = server.address();
  // Two peers that stall in the handshake take both places; a third is closed at once.
  RawConnection stalled_a(address), stalled_b(address);
  CHECK_FALSE(stalled_a.closed_by_peer(100ms));
  RawConnection third(address);
  CHECK(third.closed_by_peer(2s));
  CHECK(server.stats().refused_at_accept == 1);
  CHECK(log.wait_for({"refused at accept: 2 connections are awaiting their handshake"}));
  // At the deadline the stalled ones are closed, and an actor gets in.
  CHECK(stalled_a.closed_by_peer(5s));
  CHECK(stalled_b.closed_by_peer(5s));
  RemoteClient member(tls_client(address));
  CHECK(member.connect(connect_request(11, 1)).is_ok());
}

}  // namespace test_tls
