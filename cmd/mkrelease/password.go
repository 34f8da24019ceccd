package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"golang.org/x/term"
)

// passwordEnv holds the password of an encrypted signing key.
const passwordEnv = "MKRELEASE_KEY_PASSWORD"

// errNoPassword says how to give a key's password without a terminal.
var errNoPassword = errors.New("no password for the signing key: set " + passwordEnv + " (CI) or run on a terminal to be asked")

// password returns the signing key password: $MKRELEASE_KEY_PASSWORD when
// set (possibly empty), else a prompt on the terminal (asked twice when
// confirm is set, for a new key). It never echoes or logs the password.
func (f *Factory) password(confirm bool) ([]byte, error) {
	if v, ok := f.lookupEnv(passwordEnv); ok {
		return []byte(v), nil
	}
	fd := int(os.Stdin.Fd())
	if f.IO.In != os.Stdin || !term.IsTerminal(fd) {
		return nil, errNoPassword
	}
	fmt.Fprint(f.IO.ErrOut, "Password for the signing key: ")
	p, err := term.ReadPassword(fd)
	fmt.Fprintln(f.IO.ErrOut)
	if err != nil {
		return nil, fmt.Errorf("read password: %w", err)
	}
	if confirm {
		fmt.Fprint(f.IO.ErrOut, "Again: ")
		again, err := term.ReadPassword(fd)
		fmt.Fprintln(f.IO.ErrOut)
		if err != nil {
			return nil, fmt.Errorf("read password: %w", err)
		}
		if !bytes.Equal(p, again) {
			return nil, errors.New("the passwords differ")
		}
	}
	return p, nil
}

// lookupEnv distinguishes an empty variable from an unset one.
func (f *Factory) lookupEnv(k string) (string, bool) {
	if f.LookupEnv != nil {
		return f.LookupEnv(k)
	}
	return os.LookupEnv(k)
}
