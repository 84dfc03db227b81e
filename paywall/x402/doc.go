// Package x402 implements the x402 "exact" payment scheme on EVM chains
// (EIP-3009 transferWithAuthorization of USDC) for certbank's pay-per-request
// route, in both protocol versions:
//
//   - version 1: the 402 body lists the requirements, the client pays in the
//     X-PAYMENT header and the server confirms in X-PAYMENT-RESPONSE; networks
//     are names such as "base";
//   - version 2: the requirements travel in the PAYMENT-REQUIRED header, the
//     client pays in PAYMENT-SIGNATURE and the server confirms in
//     PAYMENT-RESPONSE; networks are CAIP-2 ids such as "eip155:8453".
//
// The pieces, in the order a paid request meets them:
//
//   - [Requirement] describes what a resource costs and renders the 402
//     ([Requirement.V1Body], [Requirement.V2Header]).
//   - [Decode] parses a payment header strictly into a [Payment].
//   - [Match] and [VerifyOffline] check a payment against our own requirement
//     without any I/O: envelope, recipient, exact value, time window and the
//     EIP-712 signature. [Verifier] adds the chain checks (nonce unused,
//     balance) through the small [ChainState] interface.
//   - A [Settler] moves the money: [DevChain] (an embedded simulated chain
//     for development and tests), [RPCSettler] (any JSON-RPC endpoint with a
//     relayer key) or [FacilitatorClient] (a remote x402 facilitator).
//     [FacilitatorServer] serves /verify, /settle and /supported on top of
//     any [Facilitator], for example [Local].
//   - [SettlementHeader] renders the response header.
//   - [Pay] is the client side of the whole exchange.
//
// Failures are *[Error] values carrying one of the reason strings of the
// current official @x402/evm 2.x family (see the Reason constants) and a
// message that tells the payer what to do.
//
// This is the only certbank package that imports go-ethereum, and its exported
// API uses no go-ethereum type: addresses, hashes and nonces are 0x-hex
// strings, amounts are certbank.USDC or *big.Int.
package x402
