package ebay

// ForgetUser drops user's cached access token, so that the next call for
// user starts from Links.RefreshToken again. Account linking calls it when
// a link changes or is removed: an unlinked account must stop bidding at
// once, not when its access token runs out two hours later, and a relink to
// another eBay user must never bid as the old one.
func (a *Adapter) ForgetUser(user string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.userTokens, user)
}
