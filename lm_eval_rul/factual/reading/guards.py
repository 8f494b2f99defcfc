"""Real English words the misspelling reader never takes for a form of the lexicon.

:data:`GUARD_WORDS`: words of 5 letters or more that lie one or two edits from a form
but mean something else ("harmonic" is not a harmonica, "according" is not an
accordion, "musical" is not mystical, "organism" is not an organist, "cartoon" is not
cartoony), and composers' first names ("Gabriel" is not Gabrieli). :data:`SHORT_WORDS`:
4-letter words one edit from a 4- or 5-letter form ("cell" is not a cello, "base" is not
a bass, "tube" is not a tuba, "fork" is not folk). Both were computed by reading every
lower-case word of an English word list (Debian's ``wamerican``) through the shipped
lexicons (FMA's titles included) and keeping each word the misspelling rule read as a
form, except plain inflections of the form itself ("violins", "cheerfully",
"depressingly"); hand-picked words of the first version are kept; "bell" stays readable
(bells). When a lexicon gains a form, ``benchmarks/factual_guard_words.py`` prints the
words to add.
"""

from __future__ import annotations

__all__ = ["GUARD_WORDS", "SHORT_WORDS"]

GUARD_WORDS: frozenset[str] = frozenset(
    """
    ablative abrasion abusing abusive according accordingly acrobat aggression albino
    albinos alessandro alexander anaemic anemic angel angler anthem anthems antonin antonio
    apace apprehension arcangelo auger baker balloonist balls banjoes barbarian barbarians
    barker batter bedrich bella belle belles belling bellow belly belts bidet bills bingo
    bitten bitter bleat blooding bloodying blooming blue blued bluer blues bluest bluesy
    blurs boding bohemian bolls bombast bonding bongoes bongs boobing booing booking booming
    booting boozing bounce bounty brads brags braiding branding brash brassy brats brays
    breading break breeding breeze brocading broiling bronzing brooking browning browsing
    brusker buckler bulls caisson calking calling calving camber cambia camille cantons
    careered carnation carol carpenter carrier carton cartons cartoon cartooned cartooning
    cartoonist cartoonists cartoons caryatid castanet cells cement cements ceremonies chair
    chairs chalkier chancier charger charier charmer charter chattier cheeky cheer
    cheerfullest cheerier cheers cheesy cherry cherubic cherubim cherubims chides child
    chile chiles chili chiller chillest chilli chills chilly chime chimed chimps chink chino
    chins chipmunk chives choral chorale chord chords christian chubbier clamber clannish
    claret clarioned classic classically classicism classics claude clemency clement climes
    clowning clowns clues colic condoles conic conical consoles contraband coopering coral
    cornea corned corner coronet corps corral corset cosmic counter county crabbier creation
    creep creeps crimes dampness danced dancer dances dankness darkens darkest dearness
    decorate decoration decreased decreasing deducted defeated defecated defected deflate
    deflation deflected defoliate defoliation deject dejects deleted delis demented
    demolition denotation dense depicted depress depressant depresses depression depressions
    depressive derogate derogation deserted desiring desolated desolating despising
    despoiling detected detested detonate detonation devolution dignifies dignities
    digressed digressing directed discs dmitri domenico dominion downiest drabness drams
    dressed dressing drubs drugs drummed dryness dukes edward eerier egocentric elate elates
    electric electrical electron electronics electrons emanuel enchant enchanter enchanters
    enchants energies energize energizer energizers energizes engaged enhanced enhancing
    enrage enrages erotica eternal exchanged exchanging exotic experiment experimented
    experimenter experiments fanny felix fellow felonious fiddled fiddly fiercer finny
    flamingo flattest fluke flukes flume flunky fluted flutey fluty foregoing france frantic
    franz frederic freehold friedemann frighting fuddle funeral funerals funks funky funny
    gabriel gamma garaged garbage garlic gentile gentled gentler gently georg george ghastly
    giacomo gioachino gipsy giuseppe giving goody gooey goofs grandads grands grange grapnel
    grave gravel graving gravy greed green greening greet greeting grenades greying grief
    grilling grimed griming grimy grinding grinning gripe griping gripping gritting groom
    groove grooving grouper grudge grueling grungy gustav hairiness hairstyle handed
    handiness handle handles happen happiest hardcover hardiness hardware harmonic harmonics
    harmonious harpy hastiness haziness headache heave heavy hello henry henryk heroin
    heroine hippy hoist hollow horniest horse host hours house housed housey humerus hummed
    hummer humongous humors hunted indie industries instrument instrumentation instruments
    intentional jangle jazzed jazzier jingle johann johannes joseph joyfullest joyousness
    juggle keyboarded keyboarder keyboarding keyword kooks lasses lassos latina latino
    latins latter lavish leanest leaning learning legalese leopold letter lightheaded likely
    liveliness lively livery loneliest lounged loveliness lovely lowliness ludwig lulls
    lunge macing mailer majesties majesty malign mallow manacling managing mandarin marry
    martin martini martins matin maudlin maurice meaning medal medals meditate meditating
    meditation melancholia melodic melodies mending mental mercy meringue meringues messiah
    messiahs messier meta metals metro michael mincing moaning modest monument monuments
    mooning mooring moral morning mornings mortal mounding mounting mouse mousing moussing
    mouthful mouthing musical musically mysteries mystic mythical nappy nation native
    neoclassic nikolai noisy noted notes numeral optimist optimists orange organa organic
    organics organism organisms organize organs outran paganism pansies panties percussive
    permission persuasion petal philipp placed plaid plaintiff plateful polka poppy popular
    portal postdoc postpone preppy proper punky puppy pyotr quanta quartz quirk quirks ralph
    raved ravels raven raves reading reaming reaping rearing rebating record recorded
    recording records recover redneck rednecks referent reformer regaling relapsing related
    relating relaxant relaxes relayed relaying releasing reliving reloading relying remaking
    renaming render reorder reorders repaying replacing replaying reporter retaking retro
    revel revere revered reverence reverend reverends reveres revering revert reworded
    richard robert rocker rocky roman sally salsa satan satin satire satirist sawing scaly
    scare scared scarf scars scathing scooting scotching scything seamy sedative seduction
    seething selective sense serener sergei sewing shoelace shooting shortish signer signers
    signing silky sills singe singed singeing singes single singles singling sinker sinkers
    sinking sinner sinners sinning sister sitting skittish slavic slavish slily sling
    slinging sloshing slotting sluttish smooching smoothing snifter sober something sonata
    sonatas songster sonny sorting sottish soughing soulful sowing space spaced spaces spacy
    spinster spoke spokes spook spooks spoor spotting springs stairway steady steam steams
    sting stinger stingers stinging stings string stringed stringy strong suing sully
    suspend suspended suspender suspends swathing sweat sweet swine swinger swingers
    swinging swung symphonic synch synthesis synthesize synthesized synthesizes syphon
    syphons table tallies tangs tangy tease tended tender tensed tenser terse therein
    thereon thresh thrush tinder trace trancey tranquiler trash travel triply triumphal
    triumphing trumped trumpeted trumpets ukelele unease valorous vandal vaporous vaporware
    veracity vicarious victories villa violet viols vital vitals vocalic vocalize vocalizes
    voiced voices wacko wacks wager wagoner wanner watchful welch whacky wider widow wishful
    wolfgang woodbine woodcock wooding woodland woodlands yellow
    """.split()
)

SHORT_WORDS: frozenset[str] = frozenset(
    """
    baas back bags bans bars base bash bask bast bath bats bays beak bong boss bras buss
    calf calk call cell chin clam dank dare darn dart dirk disc dork dram drub drug fade
    fads fare fink flue fold fork fuck fund funk geek goof gosh gram grid grim grin grip
    grit gyps hard hare hark harm hart hasp hose iris jazz keto kook lain late list lite
    loci loft lube lull lure mane mans many meal minx papa pica pink pipe pips pita puck
    puns punt puny pupa race rack raga rags rake rape rare rate rave raze reis ribs rick
    rids rigs rims rips rise roes rook rues sate scar secy sill sing sock soda sofa soil
    soup sour soya star swig tail tang tens tube tubs tuna vial wack
    """.split()
)
