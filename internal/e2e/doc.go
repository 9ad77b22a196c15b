// Package e2e holds end-to-end tests that build the real sniped binary,
// start it on a free port with its own data folder, and talk to it over
// HTTP exactly as a user's curl would. The package has no non-test code
// besides this comment.
package e2e
