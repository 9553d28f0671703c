// The system's libcrypto (OpenSSL 3), for what swift-crypto's public API makes slow on a sealed store's
// every record: sealing and opening it with ChaCha20-Poly1305 (Sources/KVStore/Sealing/Records/RecordCipher.swift),
// and the SHA-256 of its chain and its nonce, whose state must be copied for each hash
// (Sources/KVStore/Sealing/Records/SHA256State.swift; docs/sealed.md § Sealed records). Swift calls the
// functions directly; nothing here but the headers.
//
// SHA256_Init, _Update and _Final are deprecated in OpenSSL 3 in favour of EVP_Digest*, whose context lives on
// the heap and is copied there; they remain in every OpenSSL 3. Without this, each call warns.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/sha.h>
