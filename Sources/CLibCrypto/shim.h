// The system's libcrypto (OpenSSL 3), for the one thing swift-crypto's public API makes slow: sealing and
// opening a journal record with ChaCha20-Poly1305 (Sources/KVStore/Sealing/Records/RecordCipher.swift,
// docs/sealed.md § Sealed records). Swift calls the EVP functions directly; nothing here but the header.
#include <openssl/evp.h>
