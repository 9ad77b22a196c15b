package notify

import "fmt"

// A target's URL may carry credentials and its webhook secret must stay
// usable for signing (a hash would not do), so both are sealed with the
// server's secret key (package secret, the key that also seals marketplace
// tokens). The additional data binds each value to its account and field:
// a sealed value copied to another row does not open.
func aad(accountID int64, field string) []byte {
	return fmt.Appendf(nil, "sniped notifier %d %s", accountID, field)
}

func (s *Service) seal(plain []byte, accountID int64, field string) []byte {
	return s.key.Seal(plain, aad(accountID, field))
}

func (s *Service) open(sealed []byte, accountID int64, field string) ([]byte, error) {
	plain, err := s.key.Open(sealed, aad(accountID, field))
	if err != nil {
		return nil, fmt.Errorf("the target's %s does not open with this server's secret key (was the key replaced?)", field)
	}
	return plain, nil
}
