#!/usr/bin/env python3
# ruff: noqa: E501
"""Generate samples/harbor_annual_report.md, a wholly fictional long document for trying longqa.

Run from anywhere:  python samples/generate_sample.py

Every name, place, company and figure below is invented. Connecting prose is assembled from the
template and vocabulary pools in this file with random.Random(SEED), so the output is reproducible
byte for byte. Table figures are fixed data; totals are computed here and re-checked on the
rendered text (together with word count and the placement of the planted facts) before writing.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

SEED = 2025
OUT = Path(__file__).resolve().parent / "harbor_annual_report.md"
MIN_WORDS, MAX_WORDS = 22_000, 30_000

# Data and section content are laid out by hand for reading; keep the formatter off them.
# fmt: off
# ---------------------------------------------------------------- fixed data (all invented)
YEARS = (2023, 2024, 2025)
CARGO = {  # thousand tonnes, (2023, 2024, 2025)
    "Eastmoor Container Terminal": (6420, 6815, 7290), "Saltreach Bulk Terminal": (4960, 4730, 4415),
    "Wrenfield Energy Quay": (3880, 3945, 3610), "Gullhaven Ro-Ro and Ferry Terminal": (2310, 2455, 2590),
    "Northpier Breakbulk Terminal": (1745, 1690, 1830),
}
REVENUE = {  # $000, (2024, 2025)
    "Container handling": (84620, 91240), "Dry and liquid bulk": (52310, 49870), "Ro-ro and ferry": (31480, 33950),
    "Breakbulk and project cargo": (18760, 20115), "Cruise and passenger": (9845, 12430),
    "Marine services (pilotage and towage)": (27390, 28605), "Property and leases": (22150, 23480), "Other income": (4205, 3960),
}
OPEX = {  # $000, (2024, 2025)
    "Staff costs": (88420, 92310), "Energy and fuel": (19870, 18240), "Maintenance and repairs": (24560, 26930),
    "Dredging": (11240, 12875), "Insurance": (6310, 6980), "IT and systems": (5420, 6115),
    "Administration and other": (9880, 10245), "Depreciation and amortisation": (41300, 43670),
}
FINANCE_COSTS, INVESTMENT_INCOME = (8760, 9120), (1190, 1480)
HEADCOUNT = {  # full-time equivalents, (2024, 2025)
    "Marine operations": (212, 218), "Terminal operations": (486, 502),
    "Engineering and maintenance": (174, 181), "Environment, health and safety": (38, 44),
    "Finance and commercial": (61, 63), "IT and digital": (29, 34), "Corporate services and HR": (47, 45),
}
EMISSIONS = {  # tonnes CO2e, (2024, 2025)
    "Scope 1 - harbour vessel fuel": (14820, 13410), "Scope 1 - vehicles and mobile plant": (6230, 5380),
    "Scope 2 - purchased electricity": (9760, 8945), "Scope 3 - business travel and commuting": (1340, 1295),
}
INCIDENTS = {  # recorded incidents, (2024, 2025)
    "Personal injury (lost time)": (11, 7), "Personal injury (medical treatment)": (23, 19),
    "Vessel contact or allision": (5, 4), "Cargo spill or release": (9, 6),
    "Fire or smoke event": (3, 2), "Security breach": (4, 5),
}
CAPEX = [  # project, location, budget $000, spent to end-2025 $000, completion
    ("Berth 7 deepening and quay extension", "Eastmoor", 148000, 96500, "2027"),
    ("Shore power connection for ferry berths", "Gullhaven", 18400, 18100, "2025 (complete)"),
    ("Conveyor and ship-loader replacement", "Saltreach", 26750, 9300, "2026"),
    ("Biofuel tank farm", "Wrenfield", 41200, 12800, "2027"),
    ("Heavy-lift laydown pad", "Northpier", 9850, 9850, "2025 (complete)"),
    ("Port community system upgrade", "Port-wide", 7600, 4150, "2026"),
    ("Terminal building refurbishment", "Kestrel Point", 12300, 2050, "2028"),
]
FLEET = [  # name, type, built, builder, length m, home berth
    ("Marrowdeep", "Trailing suction hopper dredger", 2009, "Holloway & Venn Shipbuilders", 98, "Northpier"),
    ("Brisk Tern", "Harbour tug", 2014, "Quillon Marine Works", 32, "Tug pontoon"),
    ("Corrie Lass", "Harbour tug", 2006, "Quillon Marine Works", 30, "Tug pontoon"),
    ("Stormpetrel", "Harbour tug", 2019, "Aldermoor Yard", 33, "Tug pontoon"),
    ("Halberd", "Harbour tug", 2001, "Holloway & Venn Shipbuilders", 29, "Tug pontoon"),
    ("Sennen Gale", "Pilot launch", 2017, "Penhallow Boatworks", 17, "Pilot station"),
    ("Wick Lantern", "Pilot launch", 2021, "Penhallow Boatworks", 18, "Pilot station"),
    ("Greyling", "Hydrographic survey vessel", 2013, "Aldermoor Yard", 24, "Ledger Steps"),
    ("Mallow Sweep", "Pollution response workboat", 2016, "Quillon Marine Works", 21, "Ledger Steps"),
    ("Beacon Wren", "Buoy tender", 1998, "Holloway & Venn Shipbuilders", 41, "Northpier"),
]
TEN_YEAR = {  # year: (vessel calls, cruise calls); cargo totals for 2023-25 come from CARGO
    2016: (4210, 41, 16840), 2017: (4285, 44, 17210), 2018: (4340, 47, 17655), 2019: (4395, 52, 18020),
    2020: (3870, 3, 15930), 2021: (4120, 12, 17105), 2022: (4310, 39, 18460),
    2023: (4455, 58, None), 2024: (4520, 66, None), 2025: (4610, 74, None),
}
TARIFF = [  # charge, basis, 2024 rate, 2025 rate ($)
    ("Port dues - cargo vessels", "per GT per call", 0.38, 0.40), ("Port dues - cruise vessels", "per GT per call", 0.29, 0.31),
    ("Pilotage, up to 20,000 GT", "per act", 1450, 1520), ("Pilotage, 20,001 to 60,000 GT", "per act", 2380, 2490),
    ("Pilotage, above 60,000 GT", "per act", 3610, 3780), ("Towage", "per tug per hour", 1120, 1175),
    ("Berth hire, container quays", "per metre per day", 4.10, 4.35), ("Wharfage, dry bulk", "per tonne", 1.85, 1.93),
    ("Passenger levy, cruise", "per passenger", 6.50, 6.90),
]
CHANNELS = [  # channel, maintained depth m, width m, length km
    ("Skerrow Channel (outer approach)", 16.5, 300, 7.8), ("Inner fairway", 15.0, 240, 4.2),
    ("Eastmoor turning basin", 15.0, 520, 0.6), ("Saltreach arm", 13.2, 180, 2.1),
    ("Wrenfield arm", 14.0, 200, 1.6), ("Gullhaven basin", 9.5, 260, 0.9), ("Northpier reach", 11.0, 170, 1.4),
]
PASSENGERS = [("Cruise calls", 58, 66, 74), ("Cruise passengers", 131200, 149800, 168400),
              ("Ferry sailings", 5840, 5910, 6030), ("Ferry passengers", 1104000, 1158000, 1212000)]

# ---------------------------------------------------------------- prose pools
COMMON = {
    "time": "during the first quarter|in the spring|over the summer months|towards the end of the year|in the months that followed|early in the year|throughout the year|by the third quarter|in late 2025|midway through the year|after the winter storms|ahead of the busy summer season",
    "did": "reviewed|overhauled|refined|piloted changes to|extended|simplified|tested|rolled out a new version of|standardised|revisited|strengthened|modernised|documented|audited|reorganised|updated|consolidated|redesigned",
    "ving": "reviewing|overhauling|refining|simplifying|testing|standardising|revisiting|strengthening|modernising|auditing|reorganising|updating|redesigning",
    "verb": "review|overhaul|refine|extend|simplify|test|standardise|strengthen|modernise|audit|update|redesign",
    "helped": "helped to|made it easier to|went some way to help|allowed us to|was intended to",
    "suggests": "suggests|indicates|gives us confidence|shows",
    "verdict": "needed further investment|should be simplified|had not kept pace with the business|could be run more efficiently|would benefit from a fresh look|deserved a higher priority",
}
TOPICS = {  # per-topic pools; slots {actor} {object} {aim} {issue} {result} {partner}, values separated by |
    "port": dict(
        actor="the executive team|the commercial directorate|the strategy office|senior managers across the port|the planning department|our business development staff|the operations board|the chief executive's office", aim="diversify the cargo base|keep the port competitive against larger neighbours|attract new liner services|make better use of existing land|strengthen links with inland distribution centres|reduce dependence on a small number of customers|prepare the estate for the energy transition|keep charges predictable for long-standing customers",
        object="the five-year business plan|the port master plan|our long-term land use framework|the approach to customer contracts|the way capital is allocated between terminals|the investment pipeline|our relationships with inland logistics operators|the port's hinterland rail links|the annual planning cycle|our marketing to new shipping services",
        issue="uncertainty in global shipping schedules|softer demand for fossil fuels|competition from deeper ports along the coast|rising construction costs|delays in the national rail upgrade programme|pressure on industrial land around the harbour|volatile freight rates", result="a broader mix of cargo|more predictable revenue|a fuller order book for the coming year|steadier utilisation across the terminals|a clearer sense of where to invest|stronger relationships with key customers", partner="the shipping lines|freight forwarders|the regional transport agency|the city council|the chamber of commerce|inland terminal operators|our terminal tenants"),
    "terminal": dict(
        actor="the terminal operations team|shift supervisors|the berth planning office|the engineering crew|the quay and yard staff|the gate team|the maintenance planners|crane operators and their supervisors", aim="shorten vessel turnaround times|reduce waiting times for hauliers|keep equipment available during peak periods|cut the number of unplanned stoppages|handle more cargo without expanding the footprint|improve the accuracy of arrival forecasts|make the working day more predictable for staff",
        object="the berth allocation rules|the yard stacking patterns|the gate appointment system|the preventive maintenance calendar|the shift rota|the truck turnaround process|the handover procedures between shifts|lashing and unlashing practices|the layout of the storage areas|the procedures for handling out-of-gauge loads",
        issue="congestion on the landside approach roads|bunching of vessel arrivals|ageing handling equipment|weather delays during the winter storms|late changes to cargo documentation|a shortage of experienced crane drivers|peaks in demand at the start of each week", result="fewer unplanned crane stoppages|shorter queues at the gate|higher berth productivity|more reliable vessel schedules|less rehandling in the yard|improved customer satisfaction scores", partner="the shipping lines|road hauliers|freight forwarders|our terminal tenants|the customs service|the trade unions|equipment suppliers"),
    "marine": dict(
        actor="the harbour master's department|the pilotage service|the vessel traffic services team|tug masters and crews|the marine operations duty officers|the hydrographic survey team|the aids-to-navigation crew", aim="keep the channels safe in all weathers|reduce delays for deep-draught ships|make the best use of the tidal windows|give masters clearer information before arrival|keep pilot transfers safe in heavy seas|maintain a reliable round-the-clock service",
        object="the passage planning guidance|the pilot boarding arrangements|the tidal windows for deep-draught vessels|the buoyage in the inner fairway|the radar coverage of the approaches|the towage allocation model|the standing orders for the duty officers|the emergency towing arrangements|the survey schedule for the channels",
        issue="strong crosswinds at the harbour entrance|siltation in the inner reaches|larger vessels with less room for error|fatigue during long night shifts|poor visibility during autumn fogs|demand peaks when several ships arrive on one tide", result="fewer delays on the approaches|a clean record of pilot transfers|better use of tug capacity|more accurate arrival times|greater confidence among visiting masters", partner="the coastguard|visiting masters and shipping agents|the maritime regulator|neighbouring harbour authorities|the lifeboat service|the pilots' association"),
    "environment": dict(
        actor="the environment team|our sustainability specialists|the ecology advisers|the energy management group|the water quality officers|volunteers from across the workforce", aim="cut emissions from port operations|protect the intertidal habitats around the bay|reduce noise for neighbouring residents|improve the quality of water leaving the estate|use less energy per tonne handled|recycle more of the waste landed by ships",
        object="the carbon reduction plan|the noise monitoring network|the port's waste handling arrangements|the energy metering programme|the stormwater drainage system|the habitat management plan|reporting against our environmental permits|the fuel efficiency guidance for harbour craft",
        issue="dust from dry bulk handling|noise from night-time operations|the legacy of contaminated land on older sites|the cost of low-carbon equipment|the limited capacity of the local electricity grid|runoff from paved storage areas", result="lower energy use per tonne handled|fewer complaints from neighbours|better water quality readings|a higher share of waste diverted from landfill|measurable gains for wading birds on the flats", partner="the Calder Bay Marine Institute|the environmental regulator|local wildlife trusts|neighbouring residents|the shipping lines|the city council"),
    "safety": dict(
        actor="the health and safety team|the safety representatives|line managers|the incident review panel|the port security officers|contractor supervisors|the emergency planning group", aim="make every shift a safe one|encourage staff to report near misses|reduce the risk of people being struck by moving vehicles|make sure contractors work to the same standards as our own staff|respond quickly and calmly to emergencies|keep unauthorised people out of operational areas",
        object="the permit-to-work system|the induction programme for contractors|the near-miss reporting tool|the lifting plans for heavy loads|the fatigue management policy|the emergency response exercises|the segregation of pedestrians and vehicles|the access controls at the terminal gates|the personal protective equipment standards",
        issue="the mix of people and heavy vehicles on the quays|work at height during maintenance|slips and trips on wet surfaces|the number of contractors on site during construction|complacency during routine tasks|the risk of fatigue on night shifts", result="a rise in near-miss reporting|fewer injuries involving vehicles|faster emergency response times|more consistent use of protective equipment|stronger engagement from safety representatives", partner="the trade unions|contractors working on the estate|the fire and rescue service|the coastguard|the police|the maritime regulator"),
    "people": dict(
        actor="the human resources team|the learning and development group|line managers|the apprenticeship coordinators|the employee forum|the wellbeing champions", aim="recruit and keep skilled people|widen the pool of applicants|give staff clear routes for progression|support colleagues' mental and physical health|pass on knowledge from experienced staff before they retire|build a workforce that reflects the community it serves",
        object="the training curriculum|the graduate recruitment programme|our approach to flexible working|the performance review process|the succession plans for senior roles|the occupational health service|the pay and grading framework|the induction for new starters",
        issue="an ageing workforce in some trades|competition for engineers from other industries|the cost of housing near the port|the demands of shift work on family life|gaps in digital skills", result="lower staff turnover|a younger intake of apprentices|higher scores in the staff survey|more internal promotions|a better gender balance in operational roles", partner="the trade unions|local schools and colleges|our occupational health provider|training providers in the region|the apprentices themselves"),
    "finance": dict(
        actor="the finance team|the treasury function|the procurement department|the commercial controllers|the internal audit team|budget holders across the port", aim="keep borrowing costs under control|fund the capital programme without weakening the balance sheet|make sure every major contract delivers value for money|give managers timelier financial information|protect the Authority against unexpected losses|keep tariffs fair while covering costs",
        object="the cost base|the debt maturity profile|the procurement of major contracts|the capital approval process|monthly management reporting|the cash forecasting model|the pricing of long-term leases|the insurance programme",
        issue="higher interest rates|inflation in construction and energy prices|delays in customer payments|uncertainty over future cargo volumes|the cost of meeting new regulatory requirements", result="a stronger cash position|lower overdue receivables|better value from major contracts|a more even debt repayment profile|tighter control of discretionary spending", partner="our lenders|the external auditors|the city council as shareholder|major suppliers|the shipping lines|our insurers"),
    "governance": dict(
        actor="the board|the committees of the board|the company secretary|the independent directors|the executive team|the internal auditors", aim="hold management to account|take decisions in the long-term interest of the port|keep conflicts of interest in the open|give stakeholders confidence in the way the Authority is run|make sure the board has the right mix of skills",
        object="the board's terms of reference|the delegation of authority|the register of interests|the risk appetite statement|the board evaluation process|the code of conduct|the whistleblowing policy|the schedule of matters reserved for the board",
        issue="the growing complexity of capital projects|the time demands placed on non-executive directors|the pace of regulatory change|the need to balance commercial and public duties", result="clearer lines of accountability|more focused board meetings|better quality papers for directors|a fuller record of how decisions were reached", partner="the City of Calder Bay as shareholder|the external auditors|the maritime regulator|our legal advisers|the city's scrutiny panel"),
    "community": dict(
        actor="the community relations team|staff volunteers|the education outreach officers|our heritage volunteers|the community fund panel|local ambassadors drawn from the workforce", aim="explain how the port works to people who live nearby|open up careers at the port to young people|support local groups that make the area a better place to live|keep neighbours informed about work that might affect them|celebrate the maritime heritage of the bay",
        object="the schools programme|the harbour open days|the community grants scheme|the heritage trail around the old docks|the neighbour liaison meetings|the careers fairs|the annual harbour festival|the public viewing platform",
        issue="concerns about traffic through residential streets|limited public access to the waterfront|the perception that port jobs are closed to outsiders|noise from construction work|the fading memory of the old shipbuilding trades", result="record attendance at the open days|stronger ties with local schools|more applications from young people in the town|fewer complaints about construction traffic|a warm response from residents' associations", partner="local schools and colleges|residents' associations|the city council|local charities|the maritime museum|sports and youth clubs"),
    "digital": dict(
        actor="the IT and digital team|the data analytics group|the cyber security staff|the systems integration engineers|the digital project board", aim="share information more quickly with port users|keep systems running around the clock|protect the port against cyber attack|replace paper with digital processes|give managers a clearer view of performance in real time",
        object="the port community system|the network of quayside sensors|the data warehouse|the cyber incident response plan|the vessel scheduling software|the customer portal|the asset management database|the access management controls",
        issue="ageing systems that are costly to maintain|the growing sophistication of cyber threats|data held in too many separate places|the difficulty of hiring specialist staff", result="faster clearance of cargo|fewer system outages|a single view of vessel movements|quicker answers to customer queries", partner="our software suppliers|the national cyber security agency|the shipping lines|freight forwarders|the customs service"),
}
TEMPLATES = [  # filler sentences; {Slot} capitalises, {slot2} draws a second distinct value
    "{Time}, {actor} {did} {object} in order to {aim}.", "{Actor} {did} {object}, which {helped} {aim}.",
    "A recurring concern was {issue}, and {actor} responded by {ving} {object}.", "The main benefit so far has been {result}, although {issue} remains a concern.",
    "We continue to {aim}, and the evidence of {result} {suggests} that the approach is working.", "{Issue} tested {actor} at several points in the year.",
    "Working with {partner}, {actor} {did} {object}.", "{Time}, attention turned to {issue}.",
    "It is too early to judge the full effect, but early signs point to {result}.", "One lesson from the year is that getting {object} right matters as much as attending to {object2}.",
    "{Actor} also {did} {object2}, a less visible task that nonetheless {helped} {aim}.", "Feedback from {partner} was broadly positive, with particular praise for {result}.",
    "Not every initiative succeeded: an attempt to {aim} was paused when {issue} proved harder to manage than expected.", "Our priority for the coming year is to {aim}.",
    "{Actor} will {verb} {object} during 2026.", "This work was led by {actor}, supported by {partner}.",
    "The board received regular updates on {object} and on {issue}.", "Looking back, the most important change was {ving} {object}.",
    "Where {issue} caused problems, {actor} {did} {object} rather than waiting for a formal review.", "Alongside {result}, the year also brought {result2}.",
    "{Actor} spent a considerable part of the year on {object}.", "In practice this meant {ving} {object} and, where necessary, {ving2} {object2}.",
    "There is more to do, particularly on {issue}.", "The aim throughout was simple: to {aim}.",
    "{Time}, {actor} and {partner} agreed a shared plan to {aim}.", "Compared with the previous year, the picture was one of {result} set against {issue}.",
    "These changes will take time to bed in, but they lay the groundwork for {result}.", "Some observers have argued that more attention should be paid to {issue}, and we accept that the point has merit.",
    "A review commissioned by {actor} concluded that {object} {verdict}.", "We also {did} {object} after consultation with {partner}.",
    "Small improvements added up, bringing {result} and {result2}.", "{Partner} raised {issue} with us more than once, and the concern was a fair one.",
    "Rather than launch another large programme, {actor} concentrated on {object}.", "Progress was uneven, yet by the end of the year the gains, notably {result}, were plain to see.",
    "If {issue} can be brought under control, we expect {result} to follow.", "Nobody expects {issue} to disappear overnight.",
    "{Time}, {actor} took stock of {object} and identified several quick wins.", "For {partner}, the most visible change was {ving} {object}.",
    "{Actor} began the year by {ving} {object}, a job that had been postponed more than once.", "Part of the answer lay in {ving} {object}; part lay in persuading {partner} to change long-standing habits.",
    "{Issue} will remain a standing item for {actor} in 2026.", "{Time}, {partner} asked us to {aim}, and {actor} {did} {object} in response.",
    "Two things stand out: the effort to {aim}, and the decision to {verb} {object}.", "Without the support of {partner}, progress on {object} would have been much slower.",
    "We measured success by whether we could {aim}, and on that test the year was encouraging.", "The costs involved were modest, but the work to {verb} {object} absorbed a good deal of management time.",
    "Few of these measures were new in themselves; what changed was the discipline with which {actor} applied them.", "At the same time, {actor} kept a close eye on {issue}.",
    "{Actor} reported on progress every quarter, drawing out the link between {object} and {result}.", "Experience elsewhere suggests that efforts to {aim} succeed only with the involvement of {partner} from the start.",
    "The year also showed the limits of what can be done quickly, since the causes of {issue} run deep.", "A small working group drawn from {actor} and {partner} met monthly to {aim}.",
    "That experience informed the decision to {verb} {object} before the next peak season.", "There were setbacks, notably when {issue} disrupted the timetable, but the overall direction held.",
    "Our assessment is that the gains, such as {result}, owe more to steady effort than to any single initiative.", "{Time}, a short internal study looked at {issue} and recommended {ving} {object}.",
    "Measured against the targets set a year ago, the work on {object} is broadly on track.", "It would be wrong to claim that the problem of {issue} has been solved, but it is now far better understood.",
    "None of this would have been possible without {actor}, who {did} {object} alongside their everyday duties.", "Looking ahead, the challenge is to {aim} while also finding ways to {aim2}.",
    "{Actor} worked through the winter on {object}, and the results began to show in the spring.", "By contrast, {object} needed little more than routine attention.",
    "The underlying question, as ever, was how to {aim} while living with {issue}.", "{Partner} took part in a joint review of {object}, which produced a short list of practical changes.",
    "Some of the improvements were modest, such as {ving} {object}, but they were noticed by people on the ground.", "We did not get everything right, and {issue} caught us out on more than one occasion.",
    "Another strand of work concerned {object}, where {actor} found room for improvement.", "In a year of competing demands, {actor} chose to focus on {object} and {object2}.",
    "Regular meetings with {partner} kept {issue} firmly on the agenda.", "As the year closed, {actor} had already begun to {verb} {object} for 2026.",
    "We will track whether the recent gains, including {result}, can be sustained.", "Much of the groundwork for this was laid by {actor} in earlier years.",
    "Discussions with {partner} about {issue} continued into the new year.", "The practical test is simple: whether we can {aim} year after year, not just once.",
    "Given {issue}, {actor} also {did} {object2} as a precaution.",
]
# fmt: on
SLOT = re.compile(r"\{([A-Za-z]+)(\d?)\}")


def cap(s: str) -> str:
    return s[:1].upper() + s[1:]


class Prose:
    """Draws filler sentences: templates are dealt from a shuffled deck so each is used about equally,
    pool values are not reused within a paragraph where avoidable, and no sentence is emitted twice."""

    def __init__(self, rng: random.Random):
        self.rng, self.seen, self.deck, self.para = rng, set(), [], {}

    def sentence(self, template: str, topic: str) -> str:
        picked: dict[str, list[str]] = {}

        def sub(m: re.Match) -> str:
            key = m.group(1).lower()
            pool = [c for c in (TOPICS[topic].get(key) or COMMON[key]).split("|") if c not in picked.get(key, [])]
            fresh = [c for c in pool if c not in self.para.get(key, ())]
            val = self.rng.choice(fresh or pool)
            picked.setdefault(key, []).append(val)
            return cap(val) if m.group(1)[0].isupper() else val

        out = SLOT.sub(sub, template)
        for key, vals in picked.items():
            self.para.setdefault(key, set()).update(vals)
        return out

    def paragraph(self, topic: str) -> str:
        self.para, out, used, n = {}, [], set(), self.rng.randint(4, 6)
        while len(out) < n:
            if not self.deck:
                self.deck = self.rng.sample(TEMPLATES, len(TEMPLATES))
            t = self.deck.pop()
            if t in used:
                continue
            used.add(t)
            for _ in range(30):
                s = self.sentence(t, topic)
                if s not in self.seen:
                    self.seen.add(s)
                    out.append(s)
                    break
        return " ".join(out)


# ---------------------------------------------------------------- tables
def fmt(v) -> str:
    return f"{v:,}" if isinstance(v, int) else f"{v:,.2f}"


def md_table(headers: list[str], rows: list[list], total: bool = True) -> str:
    rows = [list(r) for r in rows]
    if total:
        sums = [sum(r[i] for r in rows) if isinstance(rows[0][i], int) else "" for i in range(1, len(headers))]
        rows.append(["Total", *sums])
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---:" if isinstance(c, (int, float)) else "---" for c in rows[0]) + "|",
    ]
    lines += ["| " + " | ".join(fmt(c) if isinstance(c, (int, float)) else str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def plain_table(headers: list[str], rows: list[list]) -> str:
    cells = [headers] + [[fmt(c) if isinstance(c, (int, float)) else str(c) for c in r] for r in rows]
    w = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [all(re.fullmatch(r"[-\d.,]+", r[i]) for r in cells[1:]) for i in range(len(headers))]

    def line(r):
        return "   ".join(c.rjust(w[i]) if numeric[i] else c.ljust(w[i]) for i, c in enumerate(r)).rstrip()

    return "\n".join([line(headers), "   ".join("-" * x for x in w)] + [line(r) for r in cells[1:]])


def pct(a: float, b: float) -> float:
    return round((b - a) / a * 100, 2)


# ---------------------------------------------------------------- document
# fmt: off
def build_sections() -> list[tuple[str, str, list]]:
    """(heading, filler topic, blocks); a block is literal markdown (str) or a count of filler paragraphs (int)."""
    cargo_tot = [sum(v[i] for v in CARGO.values()) for i in range(3)]
    rev24, rev25 = (sum(v[i] for v in REVENUE.values()) for i in range(2))
    opx24, opx25 = (sum(v[i] for v in OPEX.values()) for i in range(2))
    surplus = [r - o - f + n for r, o, f, n in zip((rev24, rev25), (opx24, opx25), FINANCE_COSTS, INVESTMENT_INCOME, strict=True)]
    em24, em25 = (sum(v[i] for v in EMISSIONS.values()) for i in range(2))
    hc24, hc25 = (sum(v[i] for v in HEADCOUNT.values()) for i in range(2))
    east = CARGO["Eastmoor Container Terminal"]
    ten = {y: (c, k, t if t is not None else cargo_tot[y - 2023]) for y, (c, k, t) in TEN_YEAR.items()}
    peak_year = max(ten, key=lambda y: ten[y][2])
    cargo_rows = [[n, *v] for n, v in CARGO.items()]
    board = [
        ("Rosalind Quarrie, Chair", "Rosalind Quarrie joined the board in 2018 and became Chair in 2021. She was born in Hestleigh, a market town on the upper reaches of the River Calder, and spent twenty-two years with Corvane Logistics, the last seven of them as its managing director. She brings long experience of warehousing, road freight and customer service."),
        ("Callum Ashdown, Chief Executive", "Callum Ashdown has been Chief Executive since 2020. Born in Calder Bay itself, he went to sea as a deck cadet before moving ashore; immediately before joining the Authority he was operations director at Tidewell Ferries, where he ran a fleet of eleven passenger and freight vessels."),
        ("Helena Marchbank, Independent Director", "A chartered accountant, Helena Marchbank was appointed in 2019. She grew up in Thornbury Wells, where she was born, and previously served as chief financial officer of Larkspur Freight Holdings, a rail and road freight group. She also sits on the board of a regional housing association."),
        ("Samuel Adeyemi-Ford, Independent Director", "Samuel Adeyemi-Ford joined the board in 2022. Born in Port Ellery, he practised maritime and commercial law for almost thirty years and was a senior partner at the law firm Grindle & Oakes before retiring from practice."),
        ("Margit Svalbrand, Independent Director", "Margit Svalbrand was appointed in 2020. An electrical engineer by training, she was born in Ostmere and was head of engineering at Northcourt Power, where she oversaw grid connections for offshore wind farms. She is a fellow of a national engineering institution."),
        ("Teodor Kallas, Independent Director", "Teodor Kallas joined in 2023. He was born in Vennick and previously worked as regional director of Brightwater Rail, responsible for freight paths and terminal access across the northern network."),
        ("Fionnuala Drummond, Independent Director", "Fionnuala Drummond is the longest-serving member of the board, having been appointed in 2017. She was born in Lisgarry and was chief executive of the Calder Bay Chamber of Commerce for nine years, which gives her a close knowledge of the businesses that depend on the port."),
        ("Anselm Rook, Independent Director", "Anselm Rook joined the board in 2024. Born in Millbrook Cross, he is a master mariner and served as harbour master of the Port of Dunmere for twelve years before retiring from that role."),
        ("Bethany Coyle, Staff-Elected Director", "Bethany Coyle was elected by employees in 2022. Born in Calder Bay, she has worked at the port for sixteen years and is a crane operator by trade. She brings the perspective of the workforce to the boardroom."),
    ]
    board_blocks = []
    for name, bio in board:
        board_blocks += [f"### {name}", bio]
    risks = [
        ("Customer and trade concentration", "finance", "The three largest shipping lines calling at Eastmoor together account for a significant part of container revenue. The loss of one of their services would take several years to replace."),
        ("The energy transition", "port", "Demand for fuel oil and diesel through Wrenfield is expected to decline over the coming decade. The biofuel tank farm is intended to offset part of that decline, but the pace of change is uncertain."),
        ("Climate and extreme weather", "environment", "Higher sea levels and more frequent storm surges threaten low-lying quays, particularly at Northpier, and could interrupt operations for days at a time."),
        ("Cyber security", "digital", "A successful attack on the port community system or on vessel traffic services could halt cargo handling across the port."),
        ("Delivery of major projects", "finance", "The Berth 7 project at Eastmoor is being delivered by Brennock Marine Civils under a fixed-price design-and-build contract. Ground conditions, weather and the contractor's own financial health all affect the risk of delay."),
        ("Skills and labour relations", "people", "The port relies on scarce skills such as marine pilotage, crane maintenance and electrical engineering, and a prolonged dispute would affect every terminal."),
        ("Interest rates and funding", "finance", "Much of the capital programme is funded by borrowing, so a sustained rise in interest rates would reduce the surplus available for reinvestment."),
        ("Regulatory change", "governance", "New rules on ship emissions, ballast water and port security could require investment that has not yet been budgeted."),
    ]
    risk_blocks = []
    for title, topic, text in risks:
        risk_blocks += [f"### {title}", text, ("fill", topic, 2)]
    glossary = [
        ("Allision", "A moving vessel striking a fixed object such as a quay or a moored ship."),
        ("Breakbulk", "Cargo carried in individual pieces, bundles or crates rather than in containers or in bulk."),
        ("Bunkering", "Supplying fuel to ships for their own use."),
        ("Feeder service", "A smaller container ship linking a port to a larger hub port."),
        ("Gross tonnage (GT)", "A measure of a ship's overall internal volume, used as the basis for port dues."),
        ("Linkspan", "An adjustable bridge that lets vehicles drive between a quay and a ro-ro vessel at any state of the tide."),
        ("Lost-time injury", "A work injury that prevents the injured person from working the next scheduled shift."),
        ("LTIFR", "Lost-time injury frequency rate: lost-time injuries per million hours worked."),
        ("Pilotage", "The service of a licensed pilot who boards a ship and advises the master on navigating local waters."),
        ("Reefer", "A refrigerated container that needs an electrical supply while on the terminal."),
        ("Ro-ro", "Roll-on roll-off: cargo that is driven on and off a vessel on its own wheels or on trailers."),
        ("Scope 1, 2 and 3", "Direct emissions from the Authority's own fuel use, indirect emissions from purchased electricity, and other indirect emissions respectively."),
        ("Shore power", "An electrical supply from the quay that lets a berthed ship switch off its auxiliary engines."),
        ("Straddle carrier", "A wheeled machine that lifts and carries containers between the quay and the stacks."),
        ("TEU", "Twenty-foot equivalent unit, the standard measure of container capacity."),
        ("Vessel traffic services (VTS)", "A shore-based service that monitors shipping movements and gives information and advice to vessels."),
        ("Wharfage", "A charge levied on cargo passing over a quay."),
    ]
    return [
        ("About This Report", "governance", [
            "This is the annual report of the Port of Calder Bay Authority for the year ended 31 December 2025. It describes the Authority's operations, people, environmental performance, governance and finances. The Authority is a self-financing public corporation owned by the City of Calder Bay; it owns the harbour estate, maintains the navigation channels and either operates or leases the terminals around the bay.",
            "Unless stated otherwise, monetary amounts are in thousands of dollars ($000) and cargo volumes are in thousands of tonnes. Figures for 2024 are shown for comparison. Cruise passengers are reported separately and are not included in cargo tonnage.", 4]),
        ("Letter from the Chair", "port", [
            "Dear stakeholders,",
            f"It is a pleasure to introduce this report on a year in which the port handled more cargo than at any time in its history. Total throughput across our five cargo terminals reached {cargo_tot[2]:,} thousand tonnes, and revenue rose to ${rev25:,} thousand. Those figures are the product of hard work by more than a thousand colleagues, and I thank every one of them.",
            4, "The board has been clear that growth must not come at the expense of safety or of the bay itself. I am encouraged that both lost-time injuries and our direct emissions fell during the year, although neither figure is yet where we want it to be.", 4,
            "With thanks and best wishes,\n\nRosalind Quarrie, Chair"]),
        ("Board of Directors", "governance", [
            "The board consists of a non-executive chair, the chief executive, six independent directors and one director elected by staff. Directors are appointed by the City of Calder Bay for terms of four years, renewable once. Short biographies of the directors serving at 31 December 2025 follow.", *board_blocks, 3]),
        ("Chief Executive's Review", "port", [
            f"Revenue rose by {pct(rev24, rev25)} percent to ${rev25:,} thousand, while operating expenses grew by {pct(opx24, opx25)} percent to ${opx25:,} thousand. After finance costs and investment income, the surplus for the year was ${surplus[1]:,} thousand, compared with ${surplus[0]:,} thousand in 2024.",
            3, "### Operations", "Container volumes at Eastmoor were the highlight of the year, helped by a new weekly feeder service and strong exports of chilled produce. Bulk volumes were weaker: poor harvests reduced grain exports, and demand for fuel oil continued its long decline.", 4,
            "### People and safety", 3, "I would like to thank the harbour master, Captain Oren Blackwood, and his team for another year of safe navigation in what were at times very difficult winter conditions."]),
        ("The Year at a Glance", "port", [
            "\n".join([
                f"- Cargo throughput: {cargo_tot[2]:,} thousand tonnes ({pct(cargo_tot[1], cargo_tot[2])} percent on 2024)",
                f"- Revenue: ${rev25:,} thousand; operating expenses: ${opx25:,} thousand",
                f"- Vessel calls: {ten[2025][0]:,}; cruise calls: {ten[2025][1]}",
                f"- Lost-time injuries: {INCIDENTS['Personal injury (lost time)'][1]} (2024: {INCIDENTS['Personal injury (lost time)'][0]})",
                f"- Greenhouse gas emissions (scopes 1 to 3 as reported): {em25:,} tonnes CO2e",
                f"- Employees: {hc25:,} full-time equivalents",
            ]), 3]),
        ("Strategy and Outlook", "port", [
            "The Authority's strategy, adopted in 2023 and known as Open Water 2030, rests on four commitments: to grow and diversify trade, to be a safe and fair employer, to reach net zero emissions from our own operations by 2040, and to remain financially independent of the city.",
            4, "### Priorities for 2026", 3]),
        ("Market Environment", "port", [4, "Container shipping rates were volatile throughout the year, and several deep-sea carriers reshaped their networks. For a port of our size, the most important trend remained the growth of short-sea and feeder services linking the bay to larger hubs.", 4]),
        ("Cargo Volumes by Terminal", "terminal", [
            f"The table below shows cargo handled at each of the five cargo terminals over the past three years. Kestrel Point, the cruise terminal, does not handle cargo and is not included. Total throughput rose by {pct(cargo_tot[1], cargo_tot[2])} percent in 2025.",
            "Cargo volumes by terminal (thousand tonnes)", md_table(["Terminal", *map(str, YEARS)], cargo_rows), 4]),
        ("Eastmoor Container Terminal", "terminal", [
            f"Eastmoor Container Terminal is the largest of the Authority's terminals by volume. It opened in 1987 on land reclaimed from the eastern mudflats and today operates six deep-water berths along a continuous quay of 1,650 metres, served by eleven ship-to-shore cranes. The terminal handles deep-sea and feeder container services and a growing volume of refrigerated cargo for the region's fruit and dairy exporters. Throughput reached {east[2]:,} thousand tonnes in 2025.",
            3, "Ingrid Vallance, the terminal manager at Eastmoor, has led the site since 2019. Under her direction the terminal introduced a vehicle booking system for hauliers and extended reefer monitoring to every stack.", 5]),
        ("Saltreach Bulk Terminal", "terminal", [
            "Opened in 1962, Saltreach was the first purpose-built bulk facility on the bay. Its four berths handle grain, fertiliser, animal feed and construction aggregates, with covered storage for some 180,000 tonnes.",
            3, "The terminal is run by Tobias Renwick, a former ship's engineer who took over as terminal manager in 2021. Volumes fell in 2025, mainly because a wet summer reduced the grain harvest across the hinterland.", 5]),
        ("Wrenfield Energy Quay", "terminal", [
            "Wrenfield Energy Quay, on the western shore, was built to serve the refinery that then stood behind it and opened in 1974. The refinery closed long ago, but the quay's three berths still handle fuel oil, diesel and, increasingly, biofuels, and the terminal supplies bunker fuel to ships calling at the port.",
            3, "Marisol Achterberg has managed Wrenfield since 2017. She describes the planned biofuel tank farm as the most important investment in the terminal's history.", 4]),
        ("Gullhaven Ro-Ro and Ferry Terminal", "terminal", [
            "Gullhaven handles cars, unaccompanied trailers, agricultural machinery and the passenger ferries to the Skerrow Isles. The terminal opened in 1999 and has five berths: three linkspans for ro-ro vessels and two dedicated ferry berths.",
            3, "Desmond Pryce, who became terminal manager at Gullhaven in 2016, oversaw the busiest summer season the terminal has known, with ferry traffic boosted by a second daily sailing on the island route.", 5]),
        ("Northpier Breakbulk Terminal", "terminal", [
            "Northpier is the oldest of the active terminals. It opened in 1958 and has seven berths, although two of them are now too shallow for modern ships and are used mainly for lay-by. The terminal handles steel coil, sawn timber and project cargo, including wind-turbine towers and blades for onshore wind farms.",
            3, "Aurelia Frost has been terminal manager at Northpier since 2014, longer than any of her counterparts. The completion of the heavy-lift laydown pad this year allows the terminal to store turbine components of up to 90 metres in length.", 5]),
        ("Kestrel Point Cruise Terminal", "port", [
            "Kestrel Point Cruise Terminal opened in 2011 on the site of the former coal wharf. It has two berths, the larger of which can take ships of up to 330 metres, and a passenger building with check-in halls and a baggage hall. The terminal manager is Lionel Abernethy, who joined the Authority from the hospitality sector.",
            "Passenger traffic, 2023 to 2025", md_table(["Measure", *map(str, YEARS)], [list(r) for r in PASSENGERS], total=False), 5]),
        ("Marine Services and Navigation", "marine", [
            "The harbour master, Captain Oren Blackwood, is responsible for the safety of navigation throughout the harbour limits. The pilotage service, vessel traffic services and the aids-to-navigation crew all report to him. The table below lists the maintained depths of the main channels at the end of 2025.",
            plain_table(["Channel", "Maintained depth (m)", "Width (m)", "Length (km)"], [[c, f"{d:.1f}", str(w), f"{k:.1f}"] for c, d, w, k in CHANNELS]),
            4]),
        ("The Harbour Fleet", "marine", [
            "The Authority owns and operates ten vessels, listed below. Towage is provided by the Authority's own tugs; pilots are carried by the two pilot launches, and the dredger and survey vessel maintain the channels.",
            "Harbour fleet at 31 December 2025", md_table(["Vessel", "Type", "Year built", "Builder", "Length (m)", "Base"], [[n, t, str(y), b, ln, base] for n, t, y, b, ln, base in FLEET], total=False),
            3]),
        ("Dredging and Channel Maintenance", "marine", [
            "Maintenance dredging is carried out mainly by the Authority's own dredger, Marrowdeep, supplemented by contractors for larger campaigns. In 2025 Marrowdeep removed about 1.1 million cubic metres of sediment, most of it from the inner fairway and the Saltreach arm.",
            3, "Survey work by the vessel Greyling confirmed that declared depths were maintained in all channels throughout the year.", 4]),
        ("Capital Projects", "finance", [
            "The capital programme at the end of 2025 comprised the seven projects below. Two were completed during the year: the heavy-lift pad at Northpier and the shore power connection at Gullhaven.",
            "Capital projects ($000)", md_table(["Project", "Location", "Budget", "Spent to end of 2025", "Expected completion"], [list(r) for r in CAPEX]),
            "The largest project is the deepening and extension of Berth 7 at Eastmoor, which will allow the terminal to receive ships drawing up to 15 metres. The contractor, Brennock Marine Civils, began piling in February and is working to a completion date in the second half of 2027.",
            3]),
        ("Tariffs and Charges", "finance", [
            "The Authority publishes its tariff each January. Most charges rose by between four and seven percent in 2025, in line with cost inflation. Selected charges are shown below in dollars.",
            plain_table(["Charge", "Basis", "2024 rate", "2025 rate"], [list(r) for r in TARIFF]),
            "Port dues are charged once per call on the vessel's gross tonnage; pilotage is charged per act, so a ship that is piloted in and out pays for two acts.", 4]),
        ("Customers and Trade Partners", "port", [4, "The port serves about forty regular shipping services, from weekly deep-sea container loops to daily island ferries. Long-term agreements with the principal lines at Eastmoor run until 2029.", 4]),
        ("Environmental Programme", "environment", [
            "2025 was the first full year of the Net Zero 2040 plan. Its main initiatives during the year were as follows.",
            "\n".join([
                "- Shore power was commissioned at the two ferry berths at Gullhaven in June, allowing the island ferries to switch off their engines while alongside.",
                "- The tug Brisk Tern completed its conversion to hybrid diesel-electric propulsion in October and now operates on battery power within the inner harbour.",
                "- Fourteen diesel straddle carriers at Eastmoor were replaced with battery-electric machines.",
                "- Twelve hectares of seagrass were replanted on the Mallow Flats in partnership with the Calder Bay Marine Institute.",
                "- Four new air-quality monitoring stations were installed along the port boundary, with readings published online every hour.",
                "- About 310,000 cubic metres of clean dredged sediment were reused to raise eroding saltmarsh instead of being disposed of at sea.",
            ]),
            f"As a result of these measures and of a cleaner electricity supply, reported emissions fell from {em24:,} to {em25:,} tonnes of CO2 equivalent, a reduction of {-pct(em24, em25)} percent.",
            "Greenhouse gas emissions (tonnes CO2e)", md_table(["Source", "2024", "2025"], [[k, *v] for k, v in EMISSIONS.items()]), 5]),
        ("Biodiversity and Water Quality", "environment", [3, "Winter counts on the Mallow Flats recorded the highest numbers of wading birds for a decade. Water quality at all eleven monitoring points met permit standards in every month of the year.", 4]),
        ("Community Programmes", "community", [
            "The Harbour Community Fund awarded $412,000 to 37 local groups in 2025, and some 2,900 pupils visited the port through the schools programme.",
            3, "Eight school leavers began engineering apprenticeships in September under the Agnes Holloway Apprenticeship scheme. The scheme is named after the shipbuilder, born in the fishing village of Penmorrow in 1893, who became one of the first women to run a shipyard on this coast.", 5]),
        ("Health and Safety", "safety", [
            f"The Authority recorded {INCIDENTS['Personal injury (lost time)'][1]} lost-time injuries in 2025, compared with {INCIDENTS['Personal injury (lost time)'][0]} in 2024. With about 2.06 million hours worked, the lost-time injury frequency rate fell from 5.5 to 3.4.",
            "Recorded incidents by category", md_table(["Category", "2024", "2025"], [[k, *v] for k, v in INCIDENTS.items()]),
            "On 14 March a mooring line parted at Northpier while a timber carrier was berthing in a strong southerly wind; nobody was hurt. The most serious injury of the year occurred on 9 August, when a lashing contractor at Eastmoor fell from a platform and fractured a wrist. In November about 400 litres of diesel spilled at Wrenfield were contained within the booms by the crew of the workboat Mallow Sweep.",
            3]),
        ("Security and Resilience", "safety", [3, "The port remained at security level 1 throughout the year. A full-scale emergency exercise in September tested the response to a fire on a ro-ro vessel, with the fire service and the coastguard taking part.", 4]),
        ("Our People", "people", [
            f"At the end of 2025 the Authority employed {hc25:,} full-time equivalent staff, up from {hc24:,} a year earlier. Women made up 24 percent of the workforce, and 31 apprentices were in training.",
            "Headcount by department (full-time equivalents)", md_table(["Department", "2024", "2025"], [[k, *v] for k, v in HEADCOUNT.items()]), 6]),
        ("Digital and Technology", "digital", [3, "The new port community system, known internally as Tidebook, went live at Eastmoor in May and will be extended to the other terminals during 2026.", 4]),
        ("History of the Port", "port", [
            "Ships have traded from Calder Bay for centuries, but the modern port dates from the late nineteenth century, when local merchants came together to build quays deep enough for steamships. Shipbuilding and repair grew up alongside the trade. In 1921 Agnes Holloway founded a small ship-repair yard at Drayport, on the south shore of the bay; after a merger with the Venn family's slipway in 1948, the business became Holloway & Venn Shipbuilders.",
            "\n".join([
                "- 1884: The Calder Bay Harbour Commission is established by local merchants.",
                "- 1903: The Skerrow breakwater is completed, sheltering the outer harbour.",
                "- 1941: Air raids destroy much of the old timber wharf.",
                "- 1966: The Harbour Commission is reconstituted as the Port of Calder Bay Authority.",
                "- 1972: The Authority moves its headquarters to Ledger House on Quay Street.",
                "- 1994: The first vessel traffic services radar is installed at Skerrow Head.",
                "- 2003: The Authority becomes a self-financing public corporation.",
                "- 2015: The Mallow Flats are designated a protected habitat.",
                "- 2020: Throughput falls sharply during the pandemic.",
                "- 2024: The board adopts the Net Zero 2040 plan.",
            ]), 4]),
        ("Ten-Year Record", "port", [
            f"The series below shows the port's activity over the past decade. Cargo throughput reached a record {ten[peak_year][2]:,} thousand tonnes in {peak_year}.",
            plain_table(["Year", "Cargo (thousand tonnes)", "Vessel calls", "Cruise calls"], [[str(y), t, c, k] for y, (c, k, t) in ten.items()]), 3]),
        ("Risk Factors", "governance", ["The board reviews the principal risks twice a year. The most significant are described below.", *risk_blocks]),
        ("Corporate Governance Statement", "governance", [
            "The board met ten times during 2025. It is supported by four committees, each chaired by an independent director. The Audit and Risk Committee, chaired by Helena Marchbank, met six times and oversees financial reporting, internal control and the risk register. The Safety and Sustainability Committee, chaired by Margit Svalbrand, met five times. The Remuneration and Nominations Committee is chaired by Samuel Adeyemi-Ford, and the Capital Projects Committee by Teodor Kallas.",
            5]),
        ("Remuneration", "people", ["Directors' fees were unchanged in 2025. The Chief Executive's remuneration includes a performance award linked to safety, customer and financial measures.", 3]),
        ("Financial Review", "finance", [
            f"Revenue for 2025 was ${rev25:,} thousand ({pct(rev24, rev25)} percent higher than in 2024) and operating expenses were ${opx25:,} thousand, giving an operating surplus of ${rev25 - opx25:,} thousand. Container handling remained the largest revenue segment, while dry and liquid bulk revenue fell.",
            3, "Capital expenditure in the year was $58,300 thousand, funded from operating cash flow and a new fifteen-year loan. Net debt at the year end was $186,400 thousand. The Authority paid a distribution of $6,000 thousand to the City of Calder Bay.", 4]),
        ("Financial Statements", "finance", [
            "### Revenue by segment", "Revenue by segment ($000)", md_table(["Segment", "2024", "2025"], [[k, *v] for k, v in REVENUE.items()]),
            "### Operating expenses", "Operating expenses ($000)", md_table(["Expense", "2024", "2025"], [[k, *v] for k, v in OPEX.items()]),
            "### Summary statement of income", "Summary statement of income ($000)", md_table(["Line", "2024", "2025"], [
                ["Revenue", rev24, rev25], ["Operating expenses", -opx24, -opx25], ["Operating surplus", rev24 - opx24, rev25 - opx25],
                ["Finance costs", -FINANCE_COSTS[0], -FINANCE_COSTS[1]], ["Investment income", *INVESTMENT_INCOME], ["Surplus for the year", *surplus]], total=False)]),
        ("Notes to the Financial Statements", "finance", [
            "### Note 1: Basis of preparation", "The financial statements are prepared on a going-concern basis under the historical cost convention, modified for the revaluation of investment property.", 2,
            "### Note 2: Revenue recognition", "Cargo and marine services revenue is recognised when the service is performed; lease income is recognised on a straight-line basis over the lease term.", 2,
            "### Note 3: Borrowings", "Borrowings comprise fixed-rate loans repayable between 2027 and 2040.", 2]),
        ("Glossary", "port", ["\n".join(f"- **{t}**: {d}" for t, d in glossary)]),
    ]
# fmt: on


def render(rng: random.Random) -> str:
    prose = Prose(rng)
    parts = [
        "# Port of Calder Bay Authority: Annual Report 2025",
        "The Port of Calder Bay Authority owns and manages the harbour of Calder Bay. This report is entirely fictional and was generated for testing question answering over long documents.",
    ]
    for title, topic, blocks in build_sections():
        parts.append(f"## {title}")
        for b in blocks:
            if isinstance(b, int):
                parts += [prose.paragraph(topic) for _ in range(b)]
            elif isinstance(b, tuple):
                parts += [prose.paragraph(b[1]) for _ in range(b[2])]
            else:
                parts.append(b)
    return "\n\n".join(parts) + "\n"


# ---------------------------------------------------------------- self-check
def num(cell: str) -> int | None:
    cell = cell.strip().replace(",", "")
    return int(cell) if re.fullmatch(r"-?\d+", cell) else None


def check(text: str) -> dict:
    lines, pipe_tables, i = text.split("\n"), 0, 0
    while i < len(lines):  # every pipe table with a Total row must add up
        if not lines[i].startswith("|"):
            i += 1
            continue
        block = []
        while i < len(lines) and lines[i].startswith("|"):
            block.append([c.strip() for c in lines[i].strip("|").split("|")])
            i += 1
        pipe_tables += 1
        body = block[2:]
        if body[-1][0] == "Total":
            for col in range(1, len(block[0])):
                vals = [num(r[col]) for r in body[:-1]]
                if None not in vals:
                    assert sum(vals) == num(body[-1][col]), (block[0], col)
    plain_tables = len(re.findall(r"\n\n[^\n|]+\n-{3,}(?: {3}-+)+\n", text))
    assert all(4 <= pct(a, b) <= 7 for *_, a, b in TARIFF), "tariff text says rises of 4 to 7 percent"
    assert text.isascii() and not re.search(r"\b2012\b", text), "unanswerable question must stay unanswerable"
    words = text.split()
    assert MIN_WORDS <= len(words) <= MAX_WORDS, len(words)

    def at(s: str, nth: int = 0) -> int:  # word offset of the nth occurrence of s
        pos = [m.start() for m in re.finditer(re.escape(s), text)]
        assert len(pos) > nth, s
        return len(text[: pos[nth]].split())

    chains = [  # planted bridge facts must sit far apart
        ("| Marrowdeep", "Agnes Holloway founded", "born in the fishing village of Penmorrow"),
        ("Audit and Risk Committee, chaired by Helena Marchbank", "Thornbury Wells"),
        ("Shore power was commissioned", "Desmond Pryce"),
        ("tug Brisk Tern completed", "| Brisk Tern"),
    ]
    for chain in chains:
        for a, b in zip(chain, chain[1:], strict=False):
            assert abs(at(a) - at(b)) >= 2000, (a, b, at(a), at(b))
    for once in ("Penmorrow", "Thornbury Wells", "Ingrid Vallance", "Agnes Holloway founded"):
        assert text.count(once) == 1, once
    sections = len(re.findall(r"^## ", text, re.M))
    assert 25 <= sections <= 40, sections
    return dict(words=len(words), sections=sections, pipe_tables=pipe_tables, plain_tables=plain_tables)


def main() -> None:
    text = render(random.Random(SEED))
    stats = check(text)
    assert stats["pipe_tables"] >= 6 and stats["plain_tables"] >= 2, stats
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}: {stats}")


if __name__ == "__main__":
    main()
