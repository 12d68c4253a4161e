// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title TestUSD: a minimal 6-decimal, USDC-like ERC-20 for local sandboxes and tests.
/// @notice Not for production. Only `minter` can create supply.
/// @dev `minter` is a constructor argument rather than `msg.sender` because the sandbox deploys through
///      the CREATE2 factory (so the address is the same on every fresh chain); there `msg.sender` would be
///      the factory. Binding the minter into the init code also binds it into the CREATE2 address.
contract TestUSD {
    string public constant name = "Test USD";
    string public constant symbol = "USDC";
    uint8 public constant decimals = 6;

    address public immutable minter;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(address minter_) {
        require(minter_ != address(0), "TestUSD: zero minter");
        minter = minter_;
    }

    function mint(address to, uint256 value) external {
        require(msg.sender == minter, "TestUSD: not minter");
        require(to != address(0), "TestUSD: zero address");
        totalSupply += value; // checked: caps every balance below 2^256
        unchecked {
            balanceOf[to] += value;
        }
        emit Transfer(address(0), to, value);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        // An allowance of type(uint256).max is "unlimited" and is not spent down (as in USDC).
        if (allowed != type(uint256).max) {
            require(allowed >= value, "TestUSD: allowance");
            unchecked {
                allowance[from][msg.sender] = allowed - value;
            }
        }
        _move(from, to, value);
        return true;
    }

    function _move(address from, address to, uint256 value) private {
        require(to != address(0), "TestUSD: zero address");
        uint256 balance = balanceOf[from];
        require(balance >= value, "TestUSD: balance");
        unchecked {
            balanceOf[from] = balance - value; // checked just above
            balanceOf[to] += value; // sum of balances never exceeds totalSupply
        }
        emit Transfer(from, to, value);
    }
}
