// An RSA key pair made fresh for a test (OpenSSL), as PEM strings, and a
// service-account key file around it.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <string>

#include <nlohmann/json.hpp>

namespace tpu::cloud::testing {

struct TestKeyPair {
  std::string private_pem;
  std::string public_pem;
};

inline TestKeyPair MakeRsaKeyPair(unsigned bits = 2048) {
  EVP_PKEY* key = EVP_RSA_gen(bits);
  TestKeyPair out;
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  out.private_pem.assign(data, n);
  BIO_free(bio);
  bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, key);
  n = BIO_get_mem_data(bio, &data);
  out.public_pem.assign(data, n);
  BIO_free(bio);
  EVP_PKEY_free(key);
  return out;
}

// RSA generation is slow on a shared machine; one pair serves every test.
inline const TestKeyPair& SharedTestKeys() {
  static const TestKeyPair keys = MakeRsaKeyPair();
  return keys;
}

inline std::string ServiceAccountJson(const TestKeyPair& keys, const std::string& token_uri,
                                      const std::string& email = "robot@proj.iam.gserviceaccount.com") {
  return nlohmann::json{{"type", "service_account"},
                        {"project_id", "proj"},
                        {"private_key_id", "kid-1"},
                        {"private_key", keys.private_pem},
                        {"client_email", email},
                        {"token_uri", token_uri}}
      .dump();
}

}  // namespace tpu::cloud::testing
