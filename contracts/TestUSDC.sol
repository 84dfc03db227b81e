// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title TestUSDC, a minimal EIP-3009 token for certbank's development chain.
///
/// @notice DEVELOPMENT ONLY. It imitates the parts of Circle's FiatToken (USDC)
/// that x402 payments touch: the EIP-712 domain ("USDC", version "2", as Base
/// Sepolia USDC signs; never Base mainnet's "USD Coin"),
/// ERC-20 balances and transfers, and EIP-3009 transfer/receive/cancel with
/// authorization, including the ERC-7598 `bytes signature` overloads. Revert
/// strings follow FiatToken's wording so that tools that classify FiatToken
/// reverts classify these the same way.
///
/// certbank places the *runtime* bytecode at the Base Sepolia USDC address through the
/// genesis alloc of a simulated chain, so no constructor ever runs. Everything
/// is therefore either a constant or computed at call time (the domain
/// separator uses block.chainid and address(this) on every call), and the only
/// configured state is the minter in storage slot 0, which the genesis alloc
/// writes. A chain whose alloc leaves slot 0 empty has no minter: nobody can
/// mint, and balances can only come from the alloc itself.
///
/// Differences from FiatToken, on purpose: no blacklist, no pause, no
/// allowances, no upgrades, a single minter without allowance, and the bytes
/// overloads accept only 65-byte ECDSA signatures (no ERC-1271 contract
/// wallets).
contract TestUSDC {
    // Storage layout (slot numbers are part of the contract's interface with
    // the genesis alloc; do not reorder):
    //   0: minter
    //   1: total supply
    //   2: balances
    //   3: authorization states
    address private _minter;
    uint256 private _totalSupply;
    mapping(address => uint256) private _balances;
    mapping(address => mapping(bytes32 => bool)) private _authorizationStates;

    /// @notice The EIP-712 domain name, as on Base Sepolia USDC (a test network):
    /// a signature for this token is never valid for Base mainnet USDC ("USD Coin").
    string public constant name = "USDC";
    /// @notice The EIP-712 domain version, as on every FiatToken v2.
    string public constant version = "2";
    /// @notice The token symbol.
    string public constant symbol = "USDC";
    /// @notice USDC has 6 decimals: 1000000 atomic units are one USDC.
    uint8 public constant decimals = 6;

    /// @notice The EIP-712 type hash of TransferWithAuthorization
    /// (0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267).
    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    /// @notice The EIP-712 type hash of ReceiveWithAuthorization.
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    /// @notice The EIP-712 type hash of CancelAuthorization.
    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");

    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    // secp256k1n / 2: signatures with a larger s are malleable and rejected.
    uint256 private constant HALF_ORDER =
        0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    /// @notice An ERC-20 transfer, also emitted by mint (from the zero address).
    event Transfer(address indexed from, address indexed to, uint256 value);
    /// @notice An authorization was used by transfer- or receiveWithAuthorization.
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    /// @notice An authorization was canceled before use.
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);
    /// @notice Tokens were minted by the minter.
    event Mint(address indexed minter, address indexed to, uint256 amount);

    /// @notice The EIP-712 domain separator for this chain and address,
    /// computed on every call so that it is right wherever the code is placed.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(
            abi.encode(
                EIP712_DOMAIN_TYPEHASH,
                keccak256(bytes(name)),
                keccak256(bytes(version)),
                block.chainid,
                address(this)
            )
        );
    }

    /// @notice The only address allowed to mint (storage slot 0).
    function minter() external view returns (address) {
        return _minter;
    }

    /// @notice All tokens in existence.
    function totalSupply() external view returns (uint256) {
        return _totalSupply;
    }

    /// @notice The balance of account.
    function balanceOf(address account) external view returns (uint256) {
        return _balances[account];
    }

    /// @notice Moves value from the caller to to.
    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    /// @notice Creates value new tokens for to. Only the minter may call it.
    function mint(address to, uint256 value) external returns (bool) {
        require(msg.sender == _minter, "FiatToken: caller is not a minter");
        require(to != address(0), "FiatToken: mint to the zero address");
        require(value > 0, "FiatToken: mint amount not greater than 0");
        _totalSupply += value;
        _balances[to] += value;
        emit Mint(msg.sender, to, value);
        emit Transfer(address(0), to, value);
        return true;
    }

    /// @notice Whether the authorization nonce of authorizer has been used or
    /// canceled.
    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationStates[authorizer][nonce];
    }

    /// @notice EIP-3009: executes a transfer signed by from. Anyone may submit it.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, v, r, s
        );
    }

    /// @notice ERC-7598: transferWithAuthorization with a packed r||s||v signature.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        (uint8 v, bytes32 r, bytes32 s) = _split(signature);
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, v, r, s
        );
    }

    /// @notice EIP-3009: like transferWithAuthorization, but only the payee may
    /// submit it, which stops front-running of deposits.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, v, r, s
        );
    }

    /// @notice ERC-7598: receiveWithAuthorization with a packed signature.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        (uint8 v, bytes32 r, bytes32 s) = _split(signature);
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, v, r, s
        );
    }

    /// @notice EIP-3009: cancels an unused authorization. Anyone may submit it.
    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        _cancelAuthorization(authorizer, nonce, v, r, s);
    }

    /// @notice ERC-7598: cancelAuthorization with a packed signature.
    function cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) external {
        (uint8 v, bytes32 r, bytes32 s) = _split(signature);
        _cancelAuthorization(authorizer, nonce, v, r, s);
    }

    function _transferWithAuthorization(
        bytes32 typeHash,
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) private {
        require(block.timestamp > validAfter, "FiatTokenV2: authorization is not yet valid");
        require(block.timestamp < validBefore, "FiatTokenV2: authorization is expired");
        _requireUnusedAuthorization(from, nonce);
        bytes32 structHash = keccak256(abi.encode(typeHash, from, to, value, validAfter, validBefore, nonce));
        require(_recover(_digest(structHash), v, r, s) == from, "FiatTokenV2: invalid signature");
        // Mark the nonce used before moving any balance.
        _authorizationStates[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);
        _transfer(from, to, value);
    }

    function _cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) private {
        _requireUnusedAuthorization(authorizer, nonce);
        bytes32 structHash = keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce));
        require(_recover(_digest(structHash), v, r, s) == authorizer, "FiatTokenV2: invalid signature");
        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    function _requireUnusedAuthorization(address authorizer, bytes32 nonce) private view {
        require(!_authorizationStates[authorizer][nonce], "FiatTokenV2: authorization is used or canceled");
    }

    function _transfer(address from, address to, uint256 value) private {
        require(from != address(0), "ERC20: transfer from the zero address");
        require(to != address(0), "ERC20: transfer to the zero address");
        uint256 balance = _balances[from];
        require(value <= balance, "ERC20: transfer amount exceeds balance");
        unchecked {
            _balances[from] = balance - value;
        }
        _balances[to] += value;
        emit Transfer(from, to, value);
    }

    function _digest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
    }

    // _recover is ecrecover with FiatToken's ECRecover checks: s in the lower
    // half order, v of 27 or 28, and a non-zero signer.
    function _recover(bytes32 digest, uint8 v, bytes32 r, bytes32 s) private pure returns (address) {
        require(uint256(s) <= HALF_ORDER, "ECRecover: invalid signature 's' value");
        require(v == 27 || v == 28, "ECRecover: invalid signature 'v' value");
        address signer = ecrecover(digest, v, r, s);
        require(signer != address(0), "ECRecover: invalid signature");
        return signer;
    }

    // _split unpacks an r||s||v signature, accepting v as 0/1 or 27/28.
    function _split(bytes memory signature) private pure returns (uint8 v, bytes32 r, bytes32 s) {
        require(signature.length == 65, "FiatTokenV2: invalid signature");
        assembly {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        if (v < 27) {
            v += 27;
        }
    }
}
