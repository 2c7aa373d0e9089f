// OpenSSL's libcrypto: HMAC-SHA256 for Standard Webhooks signatures, SHA-256
// for the sink's ETags.
#ifndef COURIER_CCRYPTO_SHIM_H
#define COURIER_CCRYPTO_SHIM_H

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#endif
