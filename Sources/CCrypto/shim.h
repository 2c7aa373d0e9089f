// OpenSSL's libcrypto, for the HMAC-SHA256 of Standard Webhooks signatures.
#ifndef COURIER_CCRYPTO_SHIM_H
#define COURIER_CCRYPTO_SHIM_H

#include <openssl/evp.h>
#include <openssl/hmac.h>

#endif
