package sim

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/sniped/sniped/internal/money"
)

// Catalogue shape. The initial catalogue ends one auction per
// endSpacingMs (with jitter inside the slot), so something ends every
// minute; Run keeps appending listings at the tail.
const (
	endSpacingMs     = 60_000
	firstEndOffsetMs = 45_000
	// sellerPool is how many distinct sellers the catalogue draws from.
	sellerPool = 400
)

// category is a family of plausible listings.
type category struct {
	Path     string   // parts joined by ":"
	Names    []string // base titles
	Extras   []string // qualifiers appended to titles
	MinPrice float64  // typical start price range, in major units
	MaxPrice float64
	Color    string // picture background colour
}

var categories = []category{
	{"Cameras & Photo:Film Photography:Film Cameras",
		[]string{"Canon AE-1 Program 35mm SLR", "Nikon F3 HP Body", "Leica M6 Rangefinder", "Olympus OM-1n", "Pentax K1000 with 50mm f/2", "Minolta X-700", "Hasselblad 500C/M", "Yashica Mat-124G TLR", "Contax T2 Compact", "Mamiya RB67 Pro S"},
		[]string{"Tested", "Film Tested", "Boxed", "Near Mint", "For Parts", "with Strap", "CLA'd", "Excellent+++"}, 20, 900, "#2b6cb0"},
	{"Computers/Tablets & Networking:Vintage Computing:Vintage Computers & Mainframes",
		[]string{"Apple IIe Platinum", "Commodore 64 Breadbin", "Amiga 500 with 512K Expansion", "Atari 800XL", "IBM PC XT 5160", "Macintosh SE/30", "ZX Spectrum 48K", "BBC Micro Model B", "TRS-80 Model III", "NeXTstation Turbo"},
		[]string{"Working", "Untested", "Boxed", "Recapped", "with Manuals", "Collection", "Rare", "PAL"}, 30, 1500, "#805ad5"},
	{"Musical Instruments & Gear:Guitars & Basses:Electric Guitars",
		[]string{"Fender Stratocaster", "Gibson Les Paul Standard", "Rickenbacker 360", "Gretsch G6120", "Fender Telecaster Deluxe", "Ibanez RG550", "Epiphone Casino", "PRS Custom 24", "Fender Jazzmaster", "Squier Classic Vibe '50s"},
		[]string{"1978", "Sunburst", "with Hard Case", "Made in Japan", "Relic", "Left Handed", "Upgraded Pickups", "USA"}, 80, 3500, "#c05621"},
	{"Jewelry & Watches:Watches, Parts & Accessories:Watches:Wristwatches",
		[]string{"Seiko 6139 Pogue Chronograph", "Omega Seamaster 300", "Rolex Oyster Perpetual 1002", "Casio F-91W", "Tissot PRX Powermatic 80", "Longines Conquest", "Hamilton Khaki Field", "Citizen Promaster Diver", "Tudor Black Bay 58", "Orient Bambino"},
		[]string{"Serviced", "Box & Papers", "Vintage", "Keeps Time", "Original Bracelet", "Automatic", "Rare Dial", "Full Set"}, 10, 6000, "#2f855a"},
	{"Toys & Hobbies:Action Figures & Accessories:Action Figures",
		[]string{"Kenner Star Wars Luke Skywalker", "Masters of the Universe He-Man", "G.I. Joe Snake Eyes", "Transformers G1 Optimus Prime", "Teenage Mutant Ninja Turtles Leonardo", "Kenner Boba Fett", "ThunderCats Lion-O", "M.A.S.K. Thunderhawk"},
		[]string{"1978", "Carded", "Complete", "Loose", "MOC", "AFA Graded", "with Weapons", "Lot"}, 5, 800, "#d53f8c"},
	{"Coins & Paper Money:Coins: US:Dollars:Morgan",
		[]string{"1921 Morgan Silver Dollar", "1881-S Morgan Dollar", "1904-O Morgan Dollar", "1889 Morgan Dollar", "1878 8TF Morgan Dollar", "1896 Morgan Dollar"},
		[]string{"MS63", "MS64 PCGS", "AU Details", "BU", "VF", "NGC MS65", "Toned", "Proof-like"}, 25, 700, "#718096"},
	{"Video Games & Consoles:Video Game Consoles",
		[]string{"Nintendo Game Boy DMG-01", "Super Nintendo SNES Console", "Sega Mega Drive II", "Nintendo 64 Bundle", "PlayStation 1 SCPH-1002", "Sega Dreamcast", "Atari 2600 Woody", "Nintendo GameCube Indigo", "Neo Geo Pocket Color"},
		[]string{"Boxed", "CIB", "Tested Working", "with 2 Controllers", "Region Free", "Refurbished", "Japanese", "Bundle"}, 15, 600, "#e53e3e"},
	{"Sports Mem, Cards & Fan Shop:Sports Trading Cards:Trading Card Singles",
		[]string{"1986 Fleer Michael Jordan #57", "1952 Topps Mickey Mantle #311", "2003 Topps Chrome LeBron James", "1989 Upper Deck Ken Griffey Jr.", "1979 O-Pee-Chee Wayne Gretzky", "2018 Prizm Luka Doncic"},
		[]string{"PSA 8", "PSA 9", "BGS 9.5", "Raw", "Rookie", "SGC 7", "Refractor", "Off-Center"}, 5, 5000, "#dd6b20"},
	{"Books & Magazines:Antiquarian & Collectible",
		[]string{"The Hobbit First Edition", "Harry Potter Philosopher's Stone", "Dune Frank Herbert 1965", "The Great Gatsby", "A Brief History of Time Signed", "Moby-Dick Illustrated", "The Lord of the Rings Box Set"},
		[]string{"First Printing", "Hardcover", "Dust Jacket", "Signed", "Book Club Edition", "Good Condition", "Ex-Library", "Leather Bound"}, 5, 2500, "#975a16"},
	{"Home & Garden:Kitchen, Dining & Bar:Small Kitchen Appliances",
		[]string{"KitchenAid Artisan Stand Mixer", "Le Creuset Dutch Oven 26cm", "Breville Barista Express", "Vitamix 5200 Blender", "Moka Express Bialetti 6 Cup", "Dualit 4 Slice Toaster"},
		[]string{"Cherry Red", "Barely Used", "New in Box", "Tested", "with Accessories", "Cream", "Refurbished", "Vintage"}, 10, 400, "#319795"},
	{"Clothing, Shoes & Accessories:Men:Men's Shoes:Athletic Shoes",
		[]string{"Nike Air Jordan 1 Chicago", "Adidas Samba OG", "New Balance 990v3", "Nike Dunk Low Panda", "Asics Gel-Lyte III", "Converse Chuck 70"},
		[]string{"Size 10", "Size 9.5", "Deadstock", "Worn Once", "OG Box", "UK 8", "EU 44", "Lightly Worn"}, 20, 900, "#4a5568"},
	{"Pottery & Glass:Glass:Art Glass",
		[]string{"Murano Sommerso Vase", "Whitefriars Banjo Vase", "Lalique Crystal Bowl", "Tiffany Favrile Glass", "Iittala Aalto Vase", "Steuben Crystal"},
		[]string{"Signed", "Mid Century", "Perfect", "Tall", "Labelled", "Small Chip", "Iridescent", "Amber"}, 10, 1200, "#38a169"},
}

// countries are where listings are located, with their currency and the
// share of the catalogue (percent).
var countries = []struct {
	Code, Currency string
	Share          int
}{
	{"US", "USD", 45},
	{"GB", "GBP", 20},
	{"DE", "EUR", 15},
	{"CA", "CAD", 10},
	{"AU", "AUD", 10},
}

// CurrencyOf returns the currency of a supported country, "" otherwise.
func CurrencyOf(country string) string {
	for _, c := range countries {
		if c.Code == country {
			return c.Currency
		}
	}
	return ""
}

// shippingTypes are the marketplace's shipping cost types.
var shippingTypes = []string{"Flat", "Flat", "Flat", "Calculated", "Free", "Free"}

var sellerSyllables = []string{"retro", "vintage", "shop", "deals", "ka", "zen", "north", "blue", "oak", "mint", "lens", "tick", "spin", "attic", "barn", "gold", "star", "pixel", "echo", "river"}

// rng returns a deterministic generator for a purpose ("catalogue",
// "rivals", a user's watch list, ...) from the seed.
func rng(seed int64, purpose string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(purpose))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

type seller struct {
	Name    string
	Score   int
	Percent float64
}

func makeSellers(r *rand.Rand) []seller {
	out := make([]seller, sellerPool)
	for i := range out {
		name := sellerSyllables[r.IntN(len(sellerSyllables))] + sellerSyllables[r.IntN(len(sellerSyllables))]
		if r.IntN(2) == 0 {
			name += "_"
		}
		name += fmt.Sprint(r.IntN(1000))
		// Scores are heavy-tailed: most sellers are small.
		score := int(math.Exp(r.Float64() * math.Log(60000)))
		pct := 100 - math.Round(r.ExpFloat64()*8)/10
		if pct < 90 {
			pct = 90 + float64(r.IntN(50))/10
		}
		out[i] = seller{Name: name, Score: score, Percent: pct}
	}
	return out
}

// pickCountry draws a country by share.
func pickCountry(r *rand.Rand) (code, currency string) {
	n := r.IntN(100)
	for _, c := range countries {
		if n < c.Share {
			return c.Code, c.Currency
		}
		n -= c.Share
	}
	return "US", "USD"
}

// roundPrice makes a start price look like a seller chose it: .99 or whole.
func roundPrice(r *rand.Rand, f float64) money.Amount {
	whole := int64(f)
	if whole < 1 {
		return 99
	}
	if r.IntN(2) == 0 {
		return money.Amount(whole*100 - 1)
	}
	return money.Amount(whole * 100)
}

// makeListing draws one listing. Start and end are set by the caller.
func makeListing(r *rand.Rand, sellers []seller) listing {
	c := categories[r.IntN(len(categories))]
	title := c.Names[r.IntN(len(c.Names))]
	for n := r.IntN(3); n >= 0; n-- {
		title += " " + c.Extras[r.IntN(len(c.Extras))]
	}
	title = dedupeWords(title)
	if len(title) > 80 {
		title = title[:80]
	}
	code, cur := pickCountry(r)
	sl := sellers[r.IntN(len(sellers))]
	// Start prices are log-uniform over the category's range; many sellers
	// start low.
	f := math.Exp(math.Log(c.MinPrice) + r.Float64()*(math.Log(c.MaxPrice)-math.Log(c.MinPrice)))
	if r.IntN(4) == 0 {
		f = f / 10
	}
	start := roundPrice(r, f)
	l := listing{
		Title:         title,
		Category:      c.Path,
		Currency:      cur,
		Country:       code,
		Seller:        sl.Name,
		SellerScore:   sl.Score,
		SellerPercent: sl.Percent,
		ShippingType:  shippingTypes[r.IntN(len(shippingTypes))],
		StartPrice:    start,
	}
	switch l.ShippingType {
	case "Free":
	default:
		l.ShippingCost = money.Amount(299 + r.IntN(30)*100)
	}
	if r.IntN(5) == 0 { // 20% have a reserve
		l.Reserve = money.Amount(float64(start) * (2 + 3*r.Float64()))
		l.Reserve -= l.Reserve % 100
		if l.Reserve <= start {
			l.Reserve = start + 100
		}
	}
	if r.IntN(7) == 0 { // ~15% offer Buy It Now
		l.BINPrice = money.Amount(float64(max(start, l.Reserve)) * (1.5 + 2*r.Float64()))
		l.BINPrice -= l.BINPrice % 100
		if l.BINPrice <= max(start, l.Reserve) {
			l.BINPrice = max(start, l.Reserve) + 500
		}
	}
	return l
}

// dedupeWords drops repeated words (two identical qualifiers).
func dedupeWords(s string) string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.Fields(s) {
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// generate builds the initial catalogue from the seed and persists it.
func (s *Sim) generate(ctx context.Context) error {
	r := rng(s.cfg.Seed, "catalogue")
	sellers := makeSellers(r)
	now := s.nowMs()
	ls := make([]*listing, s.cfg.Items)
	for i := range ls {
		l := makeListing(r, sellers)
		l.ItemNo = firstItemNo + int64(i)
		// Listed up to a week ago; ends in slot i, one slot a minute.
		l.StartMs = now - int64(r.IntN(7*24*3600))*1000
		l.EndMs = now + firstEndOffsetMs + int64(i)*endSpacingMs + int64(r.IntN(endSpacingMs))
		ls[i] = &l
	}
	// Shuffle end slots so that item numbers and end order differ, as on
	// the real site.
	r.Shuffle(len(ls), func(i, j int) { ls[i].EndMs, ls[j].EndMs = ls[j].EndMs, ls[i].EndMs })
	if err := s.saveListings(ctx, ls, true); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range ls {
		s.addLocked(newLot(*l))
	}
	return nil
}
